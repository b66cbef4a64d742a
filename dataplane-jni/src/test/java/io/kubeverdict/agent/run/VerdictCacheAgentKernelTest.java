// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The verdict cache in the agent process, on real packets: b is isolated for ingress and allows a
 * on one TCP port. The agent's queue counter (the kernel's, /proc/net/netfilter/nfnetlink_queue)
 * says whether a connection went to the agent.
 */
@KernelTest
class VerdictCacheAgentKernelTest {
    private static final int CP_PORT = 19190;
    private static final int METRICS_PORT = 19191;
    private static final int QUEUE = 17;
    private static final int ALLOWED = 8080;
    private static final int DENIED = 8081;
    private static final int CONNECT_TIMEOUT = 1500;
    private static final DomainNames NAMES = DomainNames.newBuilder()
            .addPatterns("api.test")
            .setLearnedSetId("d:cache-test")
            .build();

    private PodPair pods;
    private ScriptedControlPlane cp;
    private final List<AgentProcess> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        pods = PodPair.create("kvt-vc");
        pods.echoServerOnB(ALLOWED);
        pods.echoServerOnB(DENIED);
        pods.awaitConnectivity(DENIED);
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

    private AgentProcess startAgent() throws Exception {
        AgentProcess agent = AgentProcess.start(
                pods.node.name(),
                List.of(
                        "--node",
                        "node-1",
                        "--control-plane",
                        "127.0.0.1:" + CP_PORT,
                        "--nfqueue-id",
                        Integer.toString(QUEUE),
                        "--queues",
                        "1",
                        "--metrics-bind-address",
                        "127.0.0.1:" + METRICS_PORT,
                        "--auth",
                        "none",
                        "--verdict-cache"));
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

    /** b's policy: allow a on these TCP ports. */
    private static ToAgent policy(long seq, int... ports) {
        Rule.Builder rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                .setRuleId("ingress[0]");
        for (int port : ports) {
            rule.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(port));
        }
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(io.kubeverdict.agent.testing.Messages.policyId("x/b-from-a"))
                        .setPolicy(Policy.newBuilder().addInboundRules(rule)))
                .build();
    }

    private static ToAgent dualStack(ToAgent endpointUpdate, String ip6) {
        ToAgent.Builder b = endpointUpdate.toBuilder();
        b.getWorkloadEndpointUpdateBuilder().getEndpointBuilder().addIps(ip6);
        return b.build();
    }

    /** The full state, then InSync; a watches domain names when asked. Returns the next sequence. */
    private long sendSnapshot(AgentProcess agent, ScriptedControlPlane.Stream stream, boolean aWatchesDomains)
            throws Exception {
        ToAgent a = dualStack(endpoint(3, "x", "a", PodPair.A_IP), PodPair.A_IP6);
        if (aWatchesDomains) {
            ToAgent.Builder b = a.toBuilder();
            b.getWorkloadEndpointUpdateBuilder().getEndpointBuilder().addDomainWatches(NAMES);
            a = b.build();
        }
        stream.send(
                ipSet(1, "pods-a", PodPair.A_IP, PodPair.A_IP6),
                policy(2, ALLOWED),
                a,
                dualStack(endpoint(4, "x", "b", PodPair.B_IP, "x/b-from-a"), PodPair.B_IP6),
                inSync(5));
        awaitApplied(agent, 5);
        return 6;
    }

    private void awaitApplied(AgentProcess agent, long sequence) throws Exception {
        try {
            cp.awaitReport(sequence);
        } catch (AssertionError e) {
            throw new AssertionError("agent did not report sequence " + sequence + "; its log:\n" + agent.log(), e);
        }
    }

    /** Packets the kernel has put on our queue so far (its id sequence). */
    private long queued() throws Exception {
        for (String line :
                pods.node.exec("cat", "/proc/net/netfilter/nfnetlink_queue").split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 8 && f[0].equals(Integer.toString(QUEUE))) {
                return Long.parseLong(f[7]);
            }
        }
        throw new AssertionError("queue " + QUEUE + " not bound");
    }

    private long admittedConnections(int port) throws Exception {
        String entries = pods.node.exec(
                "conntrack", "-L", "-p", "tcp", "--dport", Integer.toString(port), "--mark", "0x08000000/0x08000000");
        return entries.lines().filter(l -> l.contains("dport=" + port)).count();
    }

    private double metric(String name) throws Exception {
        String metrics = pods.node.exec("curl", "-s", "http://127.0.0.1:" + METRICS_PORT + "/metrics");
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " not in metrics:\n" + metrics);
    }

    private void awaitMetricAtLeast(String name, double least) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        double value = metric(name);
        while (value < least && System.nanoTime() < deadline) {
            Thread.sleep(500);
            value = metric(name);
        }
        assertThat(value).as(name).isGreaterThanOrEqualTo(least);
    }

    @Test
    void repeatedAllowedConnectionsStayInTheKernelAndADenyTakesEffectForTheNextConnection() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendSnapshot(agent, stream, false);

        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("first, judged")
                .isTrue();
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("first over IPv6, judged")
                .isTrue();
        long judged = queued();
        for (int i = 0; i < 30; i++) {
            assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                    .as("repeat %d", i)
                    .isTrue();
            assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                    .as("repeat %d over IPv6", i)
                    .isTrue();
        }
        assertThat(queued()).as("no repeated connection went to the agent").isEqualTo(judged);
        assertThat(admittedConnections(ALLOWED))
                .as("connections accepted from the cache are ADMITTED, so re-judging finds them")
                .isGreaterThanOrEqualTo(31);
        awaitMetricAtLeast("kubeverdict_verdict_cache_hits_total", 60); // read from the kernel at most every 5 s
        assertThat(metric("kubeverdict_verdict_cache_entries")).isEqualTo(2);

        long beforeDenies = queued();
        for (int i = 0; i < 3; i++) {
            assertThat(pods.canConnect(DENIED, 500)).as("denied %d", i).isFalse();
        }
        assertThat(queued() - beforeDenies)
                .as("every denied attempt reaches the agent")
                .isGreaterThanOrEqualTo(3);

        // The policy now allows only the other port: the very next connection to the cached key is refused.
        stream.send(policy(seq, DENIED), inSync(seq + 1));
        awaitApplied(agent, seq + 1);
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("no stale accept after the change")
                .isFalse();
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("no stale accept after the change, IPv6")
                .isFalse();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("now allowed").isTrue();
        assertThat(metric("kubeverdict_verdict_cache_flushes_total")).isGreaterThanOrEqualTo(2);
    }

    @Test
    void theAllowsOfAPodWithDomainNameRulesAreNotCached() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        sendSnapshot(agent, stream, true);

        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();
        for (int i = 0; i < 5; i++) {
            long before = queued();
            assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                    .as("repeat %d", i)
                    .isTrue();
            assertThat(queued() - before)
                    .as("judged by the agent each time: a may use learned addresses")
                    .isGreaterThanOrEqualTo(1);
        }
    }
}
