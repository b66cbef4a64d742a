// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.inSync;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.CacheProbe;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The verdict cache across state changes, on real packets: each kind of change that can turn a
 * cached allow into a deny removes the key before the new state decides (the next connection is
 * judged and refused), and a resync, a restart and a fail-open agent's death leave no key of an
 * older state answering. b's ingress: an admin tier (default Pass) whose policy allows the pods-a
 * set on {@value #ADMIN_PORT}, then the NetworkPolicy tier allowing pods-a on the named port
 * "http" ({@value #NAMED_PORT}) and the block 10.77.0.0/24 on {@value #BLOCK_PORT}.
 */
@KernelTest
class VerdictCacheChangesKernelTest {
    private static final int CP_PORT = 19192;
    private static final int QUEUE = 18;
    private static final int NAMED_PORT = 8080;
    private static final int BLOCK_PORT = 8081;
    private static final int ADMIN_PORT = 8082;
    private static final int CONNECT_TIMEOUT = 1500;
    private static final int REFUSED_TIMEOUT = 500;

    private PodPair pods;
    private CacheProbe kernel;
    private ScriptedControlPlane cp;
    private final List<AgentProcess> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        pods = PodPair.create("kvt-vcc");
        for (int port : new int[] {NAMED_PORT, BLOCK_PORT, ADMIN_PORT}) {
            pods.echoServerOnB(port);
        }
        pods.awaitConnectivity(ADMIN_PORT);
        kernel = new CacheProbe(pods.node, QUEUE);
        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (AgentProcess agent : agents) {
                agent.close();
            }
            if (cp != null) {
                cp.close();
            }
        } finally {
            if (pods != null) {
                pods.close();
            }
        }
    }

    private AgentProcess startAgent(String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--node",
                "node-1",
                "--control-plane",
                "127.0.0.1:" + CP_PORT,
                "--nfqueue-id",
                Integer.toString(QUEUE),
                "--queues",
                "1",
                "--auth",
                "none",
                "--verdict-cache"));
        args.addAll(List.of(more));
        AgentProcess agent = AgentProcess.start(pods.node.name(), args);
        agents.add(agent);
        return agent;
    }

    private ScriptedControlPlane.Stream streamOf(AgentProcess agent) throws Exception {
        ScriptedControlPlane.Stream stream = cp.pollStream(60_000);
        if (stream == null) {
            throw new AssertionError("agent opened no Sync stream within 60 s; its log:\n" + agent.log());
        }
        return stream;
    }

    private void awaitApplied(AgentProcess agent, long sequence) throws Exception {
        try {
            cp.awaitReport(sequence);
        } catch (AssertionError e) {
            throw new AssertionError("agent did not report sequence " + sequence + "; its log:\n" + agent.log(), e);
        }
    }

    private static ToAgent ipSet(long seq, String id, IpSetType type, String... members) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setIpSetUpdate(IpSetUpdate.newBuilder().setId(id).setType(type).addAllMembers(List.of(members)))
                .build();
    }

    private static ToAgent podsA(long seq, boolean aMatches) {
        return aMatches ? ipSet(seq, "pods-a", IpSetType.IP, PodPair.A_IP) : ipSet(seq, "pods-a", IpSetType.IP);
    }

    private static ToAgent httpPort(long seq, int port) {
        return ipSet(seq, "b-http", IpSetType.IP_AND_PORT, PodPair.B_IP + ",tcp:" + port);
    }

    private static ToAgent policy(long seq, String tier, String name, Rule.Builder rule) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                        .setPolicy(Policy.newBuilder().addInboundRules(rule)))
                .build();
    }

    private static ToAgent namedPortPolicy(long seq) {
        return policy(
                seq,
                "default",
                "x/b-http",
                Rule.newBuilder()
                        .setAction(Action.ALLOW)
                        .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                        .addPorts(
                                PortMatch.newBuilder().setProtocol(Protocol.TCP).setNamedPortIpSetId("b-http"))
                        .setRuleId("ingress[0]"));
    }

    private static ToAgent blockPolicy(long seq, String... except) {
        return policy(
                seq,
                "default",
                "x/b-block",
                Rule.newBuilder()
                        .setAction(Action.ALLOW)
                        .addPeers(Peer.newBuilder()
                                .setIpBlock(IpBlock.newBuilder()
                                        .setCidr("10.77.0.0/24")
                                        .addAllExcept(List.of(except))))
                        .addPorts(
                                PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(BLOCK_PORT))
                        .setRuleId("ingress[0]"));
    }

    private static ToAgent adminPolicy(long seq, Action action) {
        return policy(
                seq,
                "admin",
                "admin-a",
                Rule.newBuilder()
                        .setAction(action)
                        .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                        .addPorts(
                                PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(ADMIN_PORT))
                        .setRuleId("ingress[0]"));
    }

    private static ToAgent endpoint(long seq, String pod, String ip, TierInfo... tiers) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                        .setEndpoint(WorkloadEndpoint.newBuilder()
                                .addIps(ip)
                                .putLabels("pod", pod)
                                .addAllTiers(List.of(tiers))))
                .build();
    }

    /**
     * The whole state as a new stream's snapshot, InSync last; {@code padding} repeated messages
     * first put that InSync past any sequence an earlier stream reported. Returns the next sequence.
     */
    private long sendState(AgentProcess agent, ScriptedControlPlane.Stream stream, int padding, boolean adminAllows)
            throws Exception {
        long seq = 1;
        for (int i = 0; i < padding; i++) {
            stream.send(podsA(seq++, true));
        }
        TierInfo admin = TierInfo.newBuilder()
                .setName("admin")
                .setDefaultAction(Action.PASS)
                .addIngressPolicies("admin-a")
                .build();
        TierInfo networkPolicies = TierInfo.newBuilder()
                .setName("default")
                .setDefaultAction(Action.DENY)
                .addIngressPolicies("x/b-http")
                .addIngressPolicies("x/b-block")
                .build();
        stream.send(
                podsA(seq++, true),
                httpPort(seq++, NAMED_PORT),
                namedPortPolicy(seq++),
                blockPolicy(seq++),
                adminPolicy(seq++, adminAllows ? Action.ALLOW : Action.PASS),
                endpoint(seq++, "a", PodPair.A_IP),
                endpoint(seq++, "b", PodPair.B_IP, admin, networkPolicies),
                inSync(seq));
        awaitApplied(agent, seq);
        return seq + 1;
    }

    /** A change (messages from {@code seq}, InSync after them) applied; returns the next sequence. */
    private long apply(AgentProcess agent, ScriptedControlPlane.Stream stream, ToAgent... change) throws Exception {
        long next = change[change.length - 1].getSequence() + 1;
        stream.send(change);
        stream.send(inSync(next));
        awaitApplied(agent, next);
        return next + 1;
    }

    /** Connects until the key is cached: the second connection must not reach the queue. */
    private void assertCached(int port, String what) throws Exception {
        assertThat(pods.canConnect(port, CONNECT_TIMEOUT))
                .as("%s: allowed", what)
                .isTrue();
        long before = kernel.queued();
        assertThat(pods.canConnect(port, CONNECT_TIMEOUT))
                .as("%s: allowed again", what)
                .isTrue();
        assertThat(kernel.queued()).as("%s: answered from the cache", what).isEqualTo(before);
    }

    /** The next connection to the key is judged (its key left the cache) and refused. */
    private void assertJudgedAndRefused(int port, String what) throws Exception {
        long before = kernel.queued();
        assertThat(pods.canConnect(port, REFUSED_TIMEOUT))
                .as("%s: refused", what)
                .isFalse();
        assertThat(kernel.queued() - before)
                .as("%s: judged, not answered from the cache", what)
                .isGreaterThanOrEqualTo(1);
    }

    @Test
    void aLabelANamedPortAnIpBlockAndAnAdminPassEachRemoveTheKeyTheyDeny() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendState(agent, stream, 0, true);

        // a's label no longer matches: the control plane takes it out of pods-a
        assertCached(NAMED_PORT, "label");
        seq = apply(agent, stream, podsA(seq, false));
        assertJudgedAndRefused(NAMED_PORT, "label changed");
        seq = apply(agent, stream, podsA(seq, true));

        // b's port named "http" moves to another number
        assertCached(NAMED_PORT, "named port");
        seq = apply(agent, stream, httpPort(seq, NAMED_PORT + 100));
        assertJudgedAndRefused(NAMED_PORT, "named port changed");
        seq = apply(agent, stream, httpPort(seq, NAMED_PORT));

        // the block now excepts a
        assertCached(BLOCK_PORT, "ipBlock");
        seq = apply(agent, stream, blockPolicy(seq, PodPair.A_IP + "/32"));
        assertJudgedAndRefused(BLOCK_PORT, "ipBlock changed");
        seq = apply(agent, stream, blockPolicy(seq));

        // the admin tier passes instead of allowing: the NetworkPolicy tier has no rule for the port
        assertCached(ADMIN_PORT, "admin allow");
        seq = apply(agent, stream, adminPolicy(seq, Action.PASS));
        assertJudgedAndRefused(ADMIN_PORT, "admin Pass");
        apply(agent, stream, adminPolicy(seq, Action.ALLOW));
        assertCached(ADMIN_PORT, "admin allow again");
    }

    @Test
    void aResyncARestartAndAFailOpenAgentsDeathLeaveNoOlderKeyAnswering() throws Exception {
        AgentProcess first = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(first);
        long seq = sendState(first, stream, 0, true);
        assertCached(ADMIN_PORT, "before the resync");
        assertThat(kernel.cachedKeys()).isEqualTo(1);

        // Resync: the stream breaks, the new stream's snapshot denies the key (admin passes).
        stream.fail(Status.UNAVAILABLE.withDescription("control plane restarting"));
        stream = streamOf(first);
        seq = sendState(first, stream, (int) seq, false);
        assertThat(kernel.cachedKeys()).as("after the resync's InSync").isZero();
        assertJudgedAndRefused(ADMIN_PORT, "after the resync");
        seq = apply(first, stream, adminPolicy(seq, Action.ALLOW));
        assertCached(ADMIN_PORT, "before the restart");

        // Restart: killed, its cache stops answering; the next agent (fail-open) starts empty.
        first.kill();
        awaitDead();
        AgentProcess second = startAgent("--fail-open");
        stream = streamOf(second);
        seq = sendState(second, stream, (int) seq, false);
        assertThat(kernel.cachedKeys()).as("after a restart's first state").isZero();
        assertJudgedAndRefused(ADMIN_PORT, "after the restart");

        // A fail-open agent killed: its cache dies too (bypass then accepts unchecked), and the
        // next agent's first state again starts from an empty cache.
        seq = apply(second, stream, adminPolicy(seq, Action.ALLOW));
        assertCached(ADMIN_PORT, "fail-open agent");
        second.kill();
        awaitDead();
        AgentProcess third = startAgent();
        stream = streamOf(third);
        sendState(third, stream, (int) seq, false);
        assertThat(kernel.cachedKeys())
                .as("after the fail-open agent's successor's first state")
                .isZero();
        assertJudgedAndRefused(ADMIN_PORT, "after the second restart");
    }

    /** A killed agent's cache stops answering once its liveness element expires (2 s). */
    private void awaitDead() throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (kernel.alive()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the killed agent's cache still answers after 20 s");
            }
            Thread.sleep(200);
        }
    }
}
