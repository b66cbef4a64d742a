// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.CacheProbe;
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
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
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
    /** Repeated IPv4 connections after the first (issue 33: 1000 connections, the first one queued). */
    private static final int REPEATS = 999;
    /** Allow -> deny flips (issue 33: 200). */
    private static final int FLIPS = 200;
    /** Short: well below the first SYN retransmission (1 s), so an attempt is one SYN. */
    private static final int FLIP_CONNECT_TIMEOUT = 75;

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
        return new CacheProbe(pods.node, QUEUE).queued();
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

        long beforeFirst = queued();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("first, judged")
                .isTrue();
        assertThat(queued() - beforeFirst).as("the first connection is queued").isGreaterThanOrEqualTo(1);
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("first over IPv6, judged")
                .isTrue();
        long judged = queued();
        for (int i = 0; i < REPEATS; i++) {
            assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                    .as("repeat %d", i)
                    .isTrue();
        }
        for (int i = 0; i < 30; i++) {
            assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                    .as("repeat %d over IPv6", i)
                    .isTrue();
        }
        assertThat(queued()).as("no repeated connection went to the agent").isEqualTo(judged);
        assertThat(admittedConnections(ALLOWED))
                .as("connections accepted from the cache are ADMITTED, so re-judging finds them")
                .isGreaterThanOrEqualTo(31);
        awaitMetricAtLeast(
                "kubeverdict_verdict_cache_hits_total", REPEATS + 30); // read from the kernel at most every 5 s
        assertThat(metric("kubeverdict_verdict_cache_entries")).isEqualTo(2);

        long beforeDenies = queued();
        for (int i = 0; i < 3; i++) {
            assertThat(pods.canConnect(DENIED, 500)).as("denied %d", i).isFalse();
        }
        assertThat(queued() - beforeDenies)
                .as("every denied attempt reaches the agent")
                .isGreaterThanOrEqualTo(3);

        // The policy now allows only the other port: the very next connection to the cached key is refused.
        double flushesBefore = metric("kubeverdict_verdict_cache_flushes_total");
        stream.send(policy(seq, DENIED), inSync(seq + 1));
        awaitApplied(agent, seq + 1);
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("no stale accept after the change")
                .isFalse();
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("no stale accept after the change, IPv6")
                .isFalse();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("now allowed").isTrue();
        assertThat(metric("kubeverdict_verdict_cache_flushes_total"))
                .as("the change emptied the cache") // how many generations came before depends on coalescing
                .isGreaterThanOrEqualTo(flushesBefore + 1);
    }

    /** One connect attempt of the flipping test's client: when it began and ended, and whether it got through. */
    private record Attempt(long start, long end, boolean connected) {}

    /**
     * Allow and deny alternate {@value #FLIPS} times while a client connects to the allowed key over
     * and over; each allow lasts until two connections got through (the first caches the key), each
     * deny until one attempt begun after it was applied has ended. No attempt that began after a
     * deny was reported and ended before the next allow was sent may have connected.
     */
    @Test
    void flippingAllowAndDenyNeverLetsAConnectionInUnderTheDeny() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendSnapshot(agent, stream, false);
        List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean();
        Thread client = new Thread(() -> {
            while (!stop.get()) {
                long start = System.nanoTime();
                try (Socket s = pods.connectAToB(ALLOWED, FLIP_CONNECT_TIMEOUT)) {
                    attempts.add(new Attempt(start, System.nanoTime(), s != null));
                } catch (Exception e) {
                    attempts.add(new Attempt(start, System.nanoTime(), false));
                }
            }
        });
        client.start();
        List<long[]> denies = new ArrayList<>();
        try {
            for (int i = 0; i < FLIPS; i++) {
                long allowSent = System.nanoTime();
                if (i > 0) {
                    denies.get(i - 1)[1] = allowSent;
                }
                stream.send(policy(seq, ALLOWED), inSync(seq + 1));
                awaitApplied(agent, seq + 1);
                long allowed = System.nanoTime();
                awaitAttempts(
                        attempts, a -> a.start() >= allowed && a.connected(), 2, "two connections under allow " + i);
                stream.send(policy(seq + 2, DENIED), inSync(seq + 3));
                awaitApplied(agent, seq + 3);
                long denied = System.nanoTime();
                denies.add(new long[] {denied, Long.MAX_VALUE});
                awaitAttempts(attempts, a -> a.start() >= denied, 1, "an attempt under deny " + i);
                seq += 4;
            }
        } finally {
            stop.set(true);
            client.join(10_000);
        }
        List<Attempt> underDeny = new ArrayList<>();
        synchronized (attempts) {
            for (Attempt a : attempts) {
                for (long[] deny : denies) {
                    if (a.start() >= deny[0] && a.end() <= deny[1]) {
                        underDeny.add(a);
                    }
                }
            }
        }
        assertThat(underDeny).as("attempts wholly under a deny").hasSizeGreaterThanOrEqualTo(FLIPS);
        assertThat(underDeny.stream().filter(Attempt::connected).count())
                .as("connections accepted under a state that denies them")
                .isZero();
        awaitMetricAtLeast("kubeverdict_verdict_cache_hits_total", FLIPS / 2.0); // the cache did answer
        assertThat(metric("kubeverdict_verdict_cache_flushes_total")).isGreaterThanOrEqualTo(2 * FLIPS);
    }

    private static void awaitAttempts(List<Attempt> attempts, Predicate<Attempt> which, int count, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (true) {
            long n;
            synchronized (attempts) {
                n = attempts.stream().filter(which).count();
            }
            if (n >= count) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 20 s");
            }
            Thread.sleep(2);
        }
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
        assertThat(new CacheProbe(pods.node, QUEUE).cachedKeys())
                .as("no key cached")
                .isZero();
    }
}
