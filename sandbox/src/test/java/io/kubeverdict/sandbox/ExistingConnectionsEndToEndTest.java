// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testing.flow.InNamespace;
import io.kubeverdict.testing.flow.LongLivedFlow;
import io.kubeverdict.testing.flow.LongLivedFlow.Kind;
import io.kubeverdict.testing.flow.TcpEchoServer;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Established connections across nodes follow a policy change made through the real control
 * plane (issue 12): long-lived TCP echo and UDP flows from x/a (node-1) to x/b (node-2, whose agent
 * enforces x/b's ingress) while x/b's policy loses two of its ports. The denied flows stop, the
 * allowed ones go on without a lost datagram or an error, new connections to the denied port are
 * refused, and reverting lets them through again; and a peer whose labels change so that it
 * leaves the policy's pod selector loses its flows while another allowed peer keeps its own. The
 * TCP echo servers are the test's own (the testbed's TCP servers close at once); UDP 80 and 81 are
 * the testbed's echo servers.
 */
@EndToEndTest
@ExtendWith(FaultBed.Resolver.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExistingConnectionsEndToEndTest {
    private static final int TCP_KEPT = 8080;
    private static final int TCP_DENIED = 8081;
    private static final int UDP_KEPT = 80;
    private static final int UDP_DENIED = 81;
    /** How long a flow must stay silent to count as cut; how long we wait for that. */
    private static final long QUIET_MILLIS = 1000;

    private static final long CUT_TIMEOUT_MILLIS = 15_000;

    private FaultBed bed;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    void useTheBed(FaultBed bed) {
        this.bed = bed;
    }

    @AfterEach
    void closeAndRecover() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
        writeFixture(Map.of()); // the labels every other test of the bed expects
        bed.recover();
    }

    private void writeFixture(Map<String, String> extraLabels) throws Exception {
        Files.writeString(bed.manifests.resolve("fixture.yaml"), UpstreamFixture.manifests(extraLabels));
    }

    /** x/b's ingress: from pod a of namespace x, on these TCP and UDP ports. */
    private static String policy(int[] tcp, int[] udp) {
        StringBuilder ports = new StringBuilder();
        for (int p : tcp) {
            ports.append("    - {protocol: TCP, port: ").append(p).append("}\n");
        }
        for (int p : udp) {
            ports.append("    - {protocol: UDP, port: ").append(p).append("}\n");
        }
        return FaultBed.policy("x", "b-ingress", """
                podSelector: {matchLabels: {pod: b}}
                ingress:
                - from:
                  - podSelector: {matchLabels: {pod: a}}
                  ports:
                """ + ports);
    }

    private static final String ALL = policy(new int[] {TCP_KEPT, TCP_DENIED}, new int[] {UDP_KEPT, UDP_DENIED});
    private static final String KEPT = policy(new int[] {TCP_KEPT}, new int[] {UDP_KEPT});

    private PodSpec pod(String name) {
        return bed.sandbox.testbed().layout().pods().stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow();
    }

    private InNamespace inside(PodSpec pod) {
        String namespace = bed.sandbox.testbed().layout().podNamespace(pod.name());
        return new InNamespace() {
            @Override
            public <T> T call(Callable<T> work) throws Exception {
                return bed.sandbox.testbed().callIn(namespace, work);
            }
        };
    }

    private LongLivedFlow flow(Kind kind, InNamespace from, String host, int port) throws Exception {
        LongLivedFlow f = LongLivedFlow.open(kind, from, host, port);
        closeables.add(f);
        assertThat(f.awaitEchoes(10, 10_000)).as("flow running: %s", f).isTrue();
        return f;
    }

    /** Whether a new TCP connection from the namespace to host:port opens within the timeout. */
    private static boolean connects(InNamespace from, String host, int port, int timeoutMillis) throws Exception {
        return from.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), timeoutMillis);
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    private String agentLog(String node) {
        return bed.sandbox.agent(node).tail(30);
    }

    @Test
    void aChangeMadeThroughTheControlPlaneCutsTheCrossNodeFlowsItDeniesAndNothingElse() throws Exception {
        PodSpec a = pod("x/a");
        PodSpec b = pod("x/b");
        assertThat(a.node()).as("a cross-node pair").isNotEqualTo(b.node());
        InNamespace inA = inside(a);
        closeables.add(TcpEchoServer.start(inside(b), TCP_KEPT));
        closeables.add(TcpEchoServer.start(inside(b), TCP_DENIED));
        String bIp = b.addressFrom(a).getHostAddress();

        bed.converge(ALL);
        LongLivedFlow tcpKept = flow(Kind.TCP, inA, bIp, TCP_KEPT);
        LongLivedFlow tcpDenied = flow(Kind.TCP, inA, bIp, TCP_DENIED);
        LongLivedFlow udpKept = flow(Kind.UDP, inA, bIp, UDP_KEPT);
        LongLivedFlow udpDenied = flow(Kind.UDP, inA, bIp, UDP_DENIED);
        long udpLost = udpKept.lost();

        long written = System.nanoTime();
        bed.converge(KEPT);
        double converged = FaultBed.seconds(written);

        for (LongLivedFlow cut : List.of(tcpDenied, udpDenied)) {
            assertThat(cut.awaitStopped(QUIET_MILLIS, CUT_TIMEOUT_MILLIS))
                    .as("cut: %s\n%s", cut, agentLog(b.node()))
                    .isTrue();
        }
        long tcpEchoed = tcpDenied.echoed();
        long udpEchoed = udpDenied.echoed();
        double lastTcpByte = (tcpDenied.lastEchoNanos() - written) / 1e9;
        double lastUdpByte = (udpDenied.lastEchoNanos() - written) / 1e9;
        assertThat(tcpKept.awaitEchoes(25, 10_000))
                .as("still flowing: %s", tcpKept)
                .isTrue();
        assertThat(udpKept.awaitEchoes(25, 10_000))
                .as("still flowing: %s", udpKept)
                .isTrue();
        assertThat(tcpDenied.echoed())
                .as("nothing gets through a cut connection: %s", tcpDenied)
                .isEqualTo(tcpEchoed);
        assertThat(udpDenied.echoed())
                .as("nothing gets through a cut flow: %s", udpDenied)
                .isEqualTo(udpEchoed);
        for (LongLivedFlow kept : List.of(tcpKept, udpKept)) {
            assertThat(kept.failure()).as("%s", kept).isNull();
        }
        assertThat(udpKept.lost()).as("no message lost or late: %s", udpKept).isEqualTo(udpLost);
        assertThat(connects(inA, bIp, TCP_DENIED, 1500))
                .as("a new connection to the denied port")
                .isFalse();
        bed.report(
                "existing connections across nodes: change written -> every agent applied %.2fs, "
                        + "-> last byte on the cut TCP connection %.2fs, UDP flow %.2fs",
                converged, lastTcpByte, lastUdpByte);

        bed.converge(ALL);
        assertThat(connects(inA, bIp, TCP_DENIED, 3000))
                .as("reverted: new connections pass\n%s", agentLog(b.node()))
                .isTrue();
        flow(Kind.UDP, inA, bIp, UDP_DENIED);
        assertThat(tcpKept.awaitEchoes(10, 10_000))
                .as("still flowing: %s", tcpKept)
                .isTrue();
        assertThat(tcpKept.failure()).as("%s", tcpKept).isNull();
    }

    @Test
    void aPeerWhoseLabelsNoLongerMatchLosesItsCrossNodeFlows() throws Exception {
        PodSpec a = pod("x/a");
        PodSpec b = pod("x/b");
        PodSpec c = pod("x/c");
        assertThat(List.of(a.node(), c.node())).as("cross-node pairs").doesNotContain(b.node());
        InNamespace inA = inside(a);
        InNamespace inC = inside(c);
        closeables.add(TcpEchoServer.start(inside(b), TCP_KEPT));
        String bFromA = b.addressFrom(a).getHostAddress();
        String bFromC = b.addressFrom(c).getHostAddress();
        String granted = "access: granted";
        writeFixture(Map.of("x/a", granted, "x/c", granted));
        bed.converge(FaultBed.policy("x", "b-ingress", """
                podSelector: {matchLabels: {pod: b}}
                ingress:
                - from:
                  - podSelector: {matchLabels: {access: granted}}
                  ports:
                  - {protocol: TCP, port: %d}
                  - {protocol: UDP, port: %d}
                """.formatted(TCP_KEPT, UDP_KEPT)));
        LongLivedFlow tcpA = flow(Kind.TCP, inA, bFromA, TCP_KEPT);
        LongLivedFlow udpA = flow(Kind.UDP, inA, bFromA, UDP_KEPT);
        LongLivedFlow tcpC = flow(Kind.TCP, inC, bFromC, TCP_KEPT);

        writeFixture(Map.of("x/c", granted)); // x/a loses its label: its IP leaves the selector's set
        assertThat(bed.sandbox.update()).as("only labels changed").isTrue();
        bed.sandbox.awaitConverged();

        for (LongLivedFlow cut : List.of(tcpA, udpA)) {
            assertThat(cut.awaitStopped(QUIET_MILLIS, CUT_TIMEOUT_MILLIS))
                    .as("cut: %s\n%s", cut, agentLog(b.node()))
                    .isTrue();
        }
        long echoed = tcpA.echoed();
        assertThat(tcpC.awaitEchoes(25, 10_000)).as("still flowing: %s", tcpC).isTrue();
        assertThat(tcpC.failure()).as("%s", tcpC).isNull();
        assertThat(tcpA.echoed())
                .as("nothing gets through a cut connection: %s", tcpA)
                .isEqualTo(echoed);
        assertThat(connects(inA, bFromA, TCP_KEPT, 1500))
                .as("a new connection from the relabelled peer")
                .isFalse();
    }
}
