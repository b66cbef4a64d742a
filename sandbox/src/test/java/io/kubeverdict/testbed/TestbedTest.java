// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testing.tier.KernelTest;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Real namespaces, links and sockets, no policy: every pod reaches every pod, and nothing stays behind. */
@KernelTest
class TestbedTest {
    private static final String PREFIX = "kvt-sb-";
    private static final Duration TIMEOUT = Duration.ofMillis(1500);

    private static PodSpec pod(String name, String node, String ip, ServePort... ports) throws Exception {
        return new PodSpec(name, node, List.of(InetAddress.getByName(ip)), List.of(ports));
    }

    private static List<String> ourNamespaces(String runName) throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/run/netns"))) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(runName + "-"))
                    .toList();
        }
    }

    @Test
    void podsOnTwoNodesReachEachOtherOverTcpAndUdpAndEverythingIsRemoved() throws Exception {
        ServePort tcp = ServePort.parse("80/TCP");
        ServePort udp = ServePort.parse("81/UDP");
        List<PodSpec> pods = List.of(
                pod("x/a", "node-1", "10.77.0.10", tcp, udp),
                pod("x/b", "node-1", "10.77.0.11", tcp, udp),
                pod("y/a", "node-2", "10.77.1.10", tcp, udp),
                pod("y/b", "node-2", "10.77.1.11", tcp, udp));
        String runName;
        try (Testbed bed = Testbed.create(PREFIX, List.of("node-1", "node-2"), pods)) {
            runName = bed.layout().runName();
            assertThat(ourNamespaces(runName)).hasSize(1 + 2 + 4);

            ObservedMatrix overTcp = bed.probe(tcp, TIMEOUT);
            assertThat(overTcp.pods()).containsExactly("x/a", "x/b", "y/a", "y/b");
            for (String from : overTcp.pods()) {
                for (String to : overTcp.pods()) {
                    assertThat(overTcp.outcome(from, to))
                            .as(from + " -> " + to + " tcp")
                            .isEqualTo(Outcome.CONNECTED);
                }
            }
            ObservedMatrix overUdp = bed.probe(udp, TIMEOUT);
            overUdp.pods()
                    .forEach(from -> overUdp.pods()
                            .forEach(to -> assertThat(overUdp.outcome(from, to))
                                    .as(from + " -> " + to + " udp")
                                    .isEqualTo(Outcome.CONNECTED)));

            // Nobody listens on 82: the destination refuses, which the prober must not count as connected.
            ObservedMatrix closed = bed.probe(ServePort.parse("82/TCP"), TIMEOUT);
            assertThat(closed.outcome("x/a", "y/b")).isEqualTo(Outcome.REFUSED);
            assertThat(closed.outcome("y/a", "x/a")).isEqualTo(Outcome.REFUSED);

            // Traffic between pods of different nodes really crosses the fabric (via the other node's address).
            String route = bed.exec(bed.layout().nodeNamespace("node-1"), "ip", "route", "get", "10.77.1.10");
            assertThat(route).contains("via " + bed.layout().nodeAddress("node-2"));
        }
        assertThat(ourNamespaces(runName)).isEmpty();
    }

    @Test
    void hostNetworkPodsServeAtTheirNodesOwnAddressAndNodesSendFromIt() throws Exception {
        ServePort tcp = ServePort.parse("80/TCP");
        ServePort udp = ServePort.parse("81/UDP");
        InetAddress n1 = InetAddress.getByName("10.76.9.1");
        InetAddress n2 = InetAddress.getByName("10.76.9.2");
        List<PodSpec> pods = List.of(
                pod("x/a", "n1", "10.76.0.1", tcp, udp),
                pod("x/b", "n2", "10.76.0.2", tcp, udp),
                new PodSpec("h/one", "n1", List.of(n1), List.of(tcp, udp), true),
                // Two hostNetwork pods of one node share its namespace and its listeners.
                new PodSpec("h/two", "n2", List.of(n2), List.of(tcp, udp), true),
                new PodSpec("h/two-again", "n2", List.of(n2), List.of(tcp), true));
        String runName;
        try (Testbed bed =
                Testbed.create(PREFIX, List.of("n1", "n2"), Map.of("n1", List.of(n1), "n2", List.of(n2)), pods)) {
            runName = bed.layout().runName();
            assertThat(ourNamespaces(runName))
                    .as("no namespaces of their own for hostNetwork pods")
                    .hasSize(1 + 2 + 2);
            assertThat(bed.layout().podNamespace("h/two"))
                    .isEqualTo(bed.layout().nodeNamespace("n2"));
            for (ServePort port : List.of(tcp, udp)) {
                ObservedMatrix m = bed.probe(port, TIMEOUT);
                m.pods()
                        .forEach(from -> m.pods()
                                .forEach(to -> assertThat(m.outcome(from, to))
                                        .as(from + " -> " + to + " " + port)
                                        .isEqualTo(Outcome.CONNECTED)));
            }
            // The node's own address is on the node, and what it sends across the fabric comes from there.
            String n2Ns = bed.layout().nodeNamespace("n2");
            assertThat(bed.exec(n2Ns, "ip", "-4", "addr", "show", "dev", "fab0"))
                    .contains("10.76.9.2/32");
            assertThat(bed.exec(n2Ns, "ip", "route", "get", "10.76.0.1")).contains("src 10.76.9.2");
            assertThat(bed.exec(n2Ns, "ip", "route", "get", "10.76.9.1"))
                    .contains("via " + bed.layout().nodeAddress("n1"))
                    .contains("src 10.76.9.2");
            assertThat(bed.exec(n2Ns, "ss", "-Hltn", "sport = :80").lines().count())
                    .as("one listener on n2")
                    .isEqualTo(1);
        }
        assertThat(ourNamespaces(runName)).isEmpty();
    }

    @Test
    void aHostNetworkPodMustUseItsNodesAddress() throws Exception {
        List<PodSpec> pods =
                List.of(new PodSpec("h/one", "n1", List.of(InetAddress.getByName("10.76.8.9")), List.of(), true));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new TestbedLayout("kvt-sb-0", List.of("n1"), pods))
                .hasMessageContaining("does not have");
    }

    @Test
    void droppedPacketsShowAsTimeouts() throws Exception {
        ServePort tcp = ServePort.parse("80/TCP");
        ServePort udp = ServePort.parse("80/UDP");
        List<PodSpec> pods = List.of(pod("x/a", "n1", "10.78.0.1", tcp, udp), pod("x/b", "n2", "10.78.0.2", tcp, udp));
        try (Testbed bed = Testbed.create(PREFIX, List.of("n1", "n2"), pods)) {
            // A drop on the destination's node, like a deny verdict, made here with nft only for this test.
            bed.exec(
                    bed.layout().nodeNamespace("n2"),
                    "nft",
                    "add table ip t; add chain ip t f { type filter hook forward priority 0; }; add rule ip t f ct state new ip daddr 10.78.0.2 drop");
            ObservedMatrix overTcp = bed.probe(tcp, Duration.ofMillis(500));
            assertThat(overTcp.outcome("x/a", "x/b")).isEqualTo(Outcome.TIMEOUT);
            assertThat(overTcp.outcome("x/b", "x/a")).isEqualTo(Outcome.CONNECTED);
            assertThat(overTcp.outcome("x/a", "x/a")).isEqualTo(Outcome.CONNECTED);
            ObservedMatrix overUdp = bed.probe(udp, Duration.ofMillis(500));
            assertThat(overUdp.outcome("x/a", "x/b")).isEqualTo(Outcome.TIMEOUT);
            assertThat(overUdp.outcome("x/b", "x/a")).isEqualTo(Outcome.CONNECTED);
        }
    }

    @Test
    void sctpIsReportedUnsupportedNotFaked() throws Exception {
        List<PodSpec> pods = List.of(pod("x/a", "n1", "10.79.0.1", ServePort.parse("80/SCTP")));
        try (Testbed bed = Testbed.create(PREFIX, List.of("n1"), pods)) {
            assertThat(bed.probe(ServePort.parse("80/SCTP"), TIMEOUT).outcome("x/a", "x/a"))
                    .isEqualTo(Outcome.UNSUPPORTED);
        }
    }

    @Test
    void processesLeftInsideLeftoversAreStoppedAndTheirNamespacesRemoved() throws Exception {
        String stale = PREFIX + "99999998-0-n0";
        Commands.run(List.of("ip", "netns", "add", stale));
        // Like an agent of a crashed sandbox still running in its node namespace.
        Process orphan = new ProcessBuilder("ip", "netns", "exec", stale, "sleep", "300").start();
        try {
            assertThat(Leftovers.remove(PREFIX)).contains(stale);
            assertThat(orphan.waitFor(10, java.util.concurrent.TimeUnit.SECONDS))
                    .isTrue();
            assertThat(Files.exists(Path.of("/run/netns", stale))).isFalse();
        } finally {
            orphan.destroyForcibly();
            if (Files.exists(Path.of("/run/netns", stale))) {
                Commands.run(List.of("ip", "netns", "del", stale));
            }
        }
    }

    @Test
    void anOwnerKilledButNotYetReapedCountsAsGone() throws Exception {
        // sleep 0 exits at once but its parent (exec'd into sleep 30) never reaps it: a zombie.
        Process parent = new ProcessBuilder("sh", "-c", "sleep 0 & echo $!; exec sleep 30").start();
        try {
            String zombie = new java.io.BufferedReader(new java.io.InputStreamReader(parent.getInputStream()))
                    .readLine()
                    .strip();
            for (int i = 0;
                    i < 100
                            && !Files.readString(Path.of("/proc", zombie, "stat"))
                                    .contains(") Z ");
                    i++) {
                Thread.sleep(20);
            }
            assertThat(Files.readString(Path.of("/proc", zombie, "stat"))).contains(") Z ");
            assertThat(ProcessHandle.of(Long.parseLong(zombie))).isPresent(); // the JDK still sees it
            String ns = PREFIX + zombie + "-0-n0";
            Commands.run(List.of("ip", "netns", "add", ns));
            try {
                assertThat(Leftovers.find(PREFIX)).contains(ns);
            } finally {
                Commands.run(List.of("ip", "netns", "del", ns));
            }
        } finally {
            parent.destroyForcibly();
        }
    }

    @Test
    void leftoversOfACrashedRunAreRemovedBeforeANewRun() throws Exception {
        // PIDs never exceed 2^22, so this owner is certainly gone.
        String stale = PREFIX + "99999999-0-n0";
        Commands.run(List.of("ip", "netns", "add", stale));
        try {
            assertThat(Leftovers.find(PREFIX)).contains(stale);
            try (Testbed bed = Testbed.create(PREFIX, List.of("n1"), List.of(pod("x/a", "n1", "10.80.0.1")))) {
                assertThat(Files.exists(Path.of("/run/netns", stale))).isFalse();
                // Our own live run is not a leftover.
                assertThat(Leftovers.find(PREFIX))
                        .doesNotContainAnyElementsOf(bed.layout().namespaces());
            }
        } finally {
            if (Files.exists(Path.of("/run/netns", stale))) {
                Commands.run(List.of("ip", "netns", "del", stale));
            }
        }
    }

    @Test
    void dualStackPodsReachEachOtherOverIpv6() throws Exception {
        ServePort tcp = ServePort.parse("80/TCP");
        List<PodSpec> pods = List.of(
                new PodSpec(
                        "x/a",
                        "n1",
                        List.of(InetAddress.getByName("fd00:77::1"), InetAddress.getByName("10.81.0.1")),
                        List.of(tcp)),
                new PodSpec("x/b", "n2", List.of(InetAddress.getByName("fd00:77::2")), List.of(tcp)));
        try (Testbed bed = Testbed.create(PREFIX, List.of("n1", "n2"), pods)) {
            ObservedMatrix m = bed.probe(tcp, TIMEOUT);
            assertThat(m.outcome("x/a", "x/b")).isEqualTo(Outcome.CONNECTED); // v6 across nodes
            assertThat(m.outcome("x/b", "x/a")).isEqualTo(Outcome.CONNECTED); // b has no IPv4: to a's IPv6
        }
    }
}
