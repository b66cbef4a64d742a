// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static io.kubeverdict.agent.dns.DnsStubClient.A;
import static io.kubeverdict.agent.dns.DnsStubClient.AAAA;
import static io.kubeverdict.agent.testing.Messages.endpointUpdate;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.policyUpdate;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.domainNames;
import static io.kubeverdict.policy.Snapshots.domains;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.port;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.policy.Snapshots;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testing.tier.KernelTest;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Egress to domain names on real packets: the agent process in a node namespace between pod a
 * (the client) and pod b, which runs a DNS server on port 53 and a TCP echo server on port 8080
 * reachable at every address of 10.78.0.0/16 and fd78::/64 (local routes in b, routed to b by
 * the node). a's only egress rules allow DNS to b and TCP 8080 to the names api.test and
 * *.svc.test; so an address under 10.78/16 is reachable from a exactly while a has learned it
 * from an answer it received itself. Every try below uses an address no earlier answer carried,
 * so each connection is the first one after its answer. The agent runs with
 * --dns-min-ttl 1 --dns-max-ttl 3 --dns-resolvers (b's addresses); b also runs a rogue DNS server
 * at 10.78.0.53, which a may ask but the agent was not given. Namespaces, server and agent go at the end, also on failure.
 */
@KernelTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DnsEgressKernelTest {
    private static final int CP_PORT = 19490;
    private static final int METRICS_PORT = 19401;
    private static final int PORT = 8080;
    private static final int TRIES = 1000;
    private static final int ALLOWED_TIMEOUT = 3000;
    /**
     * A refused connection's SYN is dropped: connect gives up after this, before the first SYN
     * retransmission (1 s), so a refused try is exactly one drop the agent counts before it returns.
     */
    private static final int REFUSED_TIMEOUT = 700;

    private static final int DNS_TIMEOUT = 3000;
    private static final long MAX_TTL_SECONDS = 3;
    private static final DomainNames NAMES = domainNames("d:test-names", "*.svc.test", "api.test");

    private PodPair pods;
    private ScriptedControlPlane cp;
    private AgentProcess agent;
    private DnsStubServer dns;
    private DnsStubServer rogue;
    private static final String ROGUE_DNS = "10.78.0.53";

    @BeforeAll
    void setUp() throws Exception {
        pods = PodPair.create("kvt-dns");
        pods.b.exec("ip", "route", "add", "local", "10.78.0.0/16", "dev", "lo");
        pods.b.exec("ip", "-6", "route", "add", "local", "fd78::/64", "dev", "lo");
        pods.node.exec("ip", "route", "add", "10.78.0.0/16", "via", PodPair.B_IP);
        pods.node.exec("ip", "-6", "route", "add", "fd78::/64", "via", PodPair.B_IP6);
        pods.echoServerOnB(PORT);
        dns = DnsStubServer.start(pods.b.inside(), DnsEgressKernelTest::answer);
        // A server the pod may reach on port 53 but that is not a resolver the agent was given (M5).
        rogue = DnsStubServer.startUdp(pods.b.inside(), ROGUE_DNS, DnsEgressKernelTest::answer);
        pods.awaitConnectivity(PORT);
        // Without an agent every address of the range answers: a refusal below is the agent's.
        assertThat(pods.canConnect("10.78.0.99", PORT, ALLOWED_TIMEOUT))
                .as("no agent: 10.78/16 reachable (%s)", pods.lastFailure())
                .isTrue();
        assertThat(pods.canConnect("fd78::99", PORT, ALLOWED_TIMEOUT))
                .as("no agent: fd78::/64 reachable (%s)", pods.lastFailure())
                .isTrue();
        assertThat(DnsStubClient.udp(pods.a.inside(), PodPair.B_IP, "api.test", A, DNS_TIMEOUT))
                .hasSize(1);

        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
        agent = AgentProcess.start(
                pods.node.name(),
                List.of(
                        "--node",
                        "node-1",
                        "--control-plane",
                        "127.0.0.1:" + CP_PORT,
                        "--nfqueue-id",
                        "21",
                        "--queues",
                        "2",
                        "--dns-queue-id",
                        "23",
                        "--dns-min-ttl",
                        "1",
                        "--dns-max-ttl",
                        "" + MAX_TTL_SECONDS,
                        "--dns-resolvers",
                        PodPair.B_IP + "," + PodPair.B_IP6,
                        "--metrics-bind-address",
                        "127.0.0.1:" + METRICS_PORT,
                        "--inspect-listen",
                        "off",
                        "--auth",
                        "none"));
        ScriptedControlPlane.Stream stream = cp.pollStream(60_000);
        if (stream == null) {
            throw new AssertionError("agent opened no Sync stream within 60 s; its log:\n" + agent.log());
        }
        stream.send(
                policyUpdate(1, egressPolicy()),
                endpointUpdate(2, client()),
                endpointUpdate(3, Snapshots.endpoint("x/b", List.of(PodPair.B_IP, PodPair.B_IP6))),
                inSync(4));
        try {
            cp.awaitReport(4);
        } catch (AssertionError e) {
            throw new AssertionError("agent did not report sequence 4; its log:\n" + agent.log(), e);
        }
    }

    @AfterAll
    void tearDown() throws Exception {
        try {
            if (dns != null) {
                dns.close();
            }
            if (rogue != null) {
                rogue.close();
            }
            if (agent != null) {
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

    /** a's egress: DNS to b and to the rogue server (ipBlocks), TCP 8080 to the watched names only. */
    private static ActivePolicy egressPolicy() {
        return Snapshots.policy(
                "default",
                "x/a-egress",
                List.of(),
                List.of(
                        allow(
                                "egress[0]",
                                List.of(
                                        block(PodPair.B_IP + "/32"),
                                        block(PodPair.B_IP6 + "/128"),
                                        block(ROGUE_DNS + "/32")),
                                List.of(port(Protocol.UDP, 53), port(Protocol.TCP, 53))),
                        allow("egress[1]", List.of(domains(NAMES)), List.of(port(Protocol.TCP, PORT)))));
    }

    private static Endpoint client() {
        Endpoint a =
                Snapshots.endpoint("x/a", List.of(PodPair.A_IP, PodPair.A_IP6), np(List.of(), List.of("x/a-egress")));
        return a.toBuilder()
                .setEndpoint(a.getEndpoint().toBuilder().addDomainWatches(NAMES))
                .build();
    }

    // ------------------------------------------------------------------ the DNS server's zone

    /** Pool addresses: try i of the first-connection test gets its own. */
    private static String poolAddress(int i, int qtype) {
        return qtype == AAAA ? "fd78::1:" + Integer.toHexString(i) : "10.78." + (1 + i / 250) + "." + (1 + i % 250);
    }

    private static DnsMessages answer(String asked, int qtype) {
        String name = asked.toLowerCase(Locale.ROOT);
        DnsMessages m = DnsMessages.response(asked, qtype);
        if (name.matches("t\\d+\\.svc\\.test")) {
            int i = Integer.parseInt(name.substring(1, name.indexOf('.')));
            return qtype == AAAA ? m.aaaa(asked, 60, poolAddress(i, AAAA)) : m.a(asked, 60, poolAddress(i, A));
        }
        if (name.startsWith("many")) {
            return fiftyAnswers(m, asked, name.equals("many.svc.test") ? 200 : 201);
        }
        return switch (name) {
            case "api.test" -> m.a(asked, 60, "10.78.0.10");
            case "a.svc.test" -> qtype == AAAA ? m.aaaa(asked, 60, "fd78::12") : m.a(asked, 60, "10.78.0.12");
            case "other.test" -> m.a(asked, 60, "10.78.0.20");
            case "tcp.svc.test" -> m.a(asked, 60, "10.78.0.21");
            case "rogue.svc.test" -> m.a(asked, 60, "10.78.0.40");
            case "expire.svc.test" -> m.a(asked, 1, "10.78.0.30");
            case "long.svc.test" -> m.a(asked, 3600, "10.78.0.31");
            case "zero.svc.test" -> m.a(asked, 0, "10.78.0.32");
            default -> m; // no records
        };
    }

    /** 50 answers: a CNAME chain of two links to a name with 40 A and 8 AAAA records. */
    private static DnsMessages fiftyAnswers(DnsMessages m, String asked, int third) {
        m.cname(asked, 60, "edge.cdn.example").cname("edge.cdn.example", 60, "pool" + third + ".cdn.example");
        for (int i = 1; i <= 40; i++) {
            m.a("pool" + third + ".cdn.example", 60, "10.78." + third + "." + i);
        }
        for (int i = 1; i <= 8; i++) {
            m.aaaa("pool" + third + ".cdn.example", 60, "fd78::" + third + ":" + i);
        }
        return m;
    }

    // ------------------------------------------------------------------ helpers

    private List<String> resolve(String name, int qtype) throws Exception {
        return strings(DnsStubClient.udp(pods.a.inside(), PodPair.B_IP, name, qtype, DNS_TIMEOUT));
    }

    private List<String> resolveOverTcp(String name, int qtype) throws Exception {
        return strings(DnsStubClient.tcp(pods.a.inside(), PodPair.B_IP, name, qtype, DNS_TIMEOUT));
    }

    private static List<String> strings(List<InetAddress> addresses) {
        List<String> out = new ArrayList<>();
        for (InetAddress a : addresses) {
            out.add(a.getHostAddress());
        }
        return out;
    }

    private boolean reaches(String address) throws Exception {
        return pods.canConnect(address, PORT, ALLOWED_TIMEOUT);
    }

    private boolean refused(String address) throws Exception {
        return !pods.canConnect(address, PORT, REFUSED_TIMEOUT);
    }

    private double tcpDrops() throws Exception {
        String text = pods.node.exec("curl", "-s", "http://127.0.0.1:" + METRICS_PORT + "/metrics");
        double sum = 0;
        for (String family : List.of("ipv4", "ipv6")) {
            String series = "kubeverdict_verdicts_total{family=\"" + family + "\",protocol=\"tcp\",verdict=\"drop\"} ";
            for (String line : text.split("\n")) {
                if (line.startsWith(series)) {
                    sum += Double.parseDouble(line.substring(series.length()).trim());
                }
            }
        }
        return sum;
    }

    // ------------------------------------------------------------------ tests

    @Test
    void reachesWhatItResolvedForTheWatchedNamesAndNothingElse() throws Exception {
        assertThat(refused("10.78.0.10"))
                .as("api.test's address before a asked for it\n%s", agent.log())
                .isTrue();
        assertThat(resolve("api.test", A)).containsExactly("10.78.0.10");
        assertThat(reaches("10.78.0.10"))
                .as("api.test's address after the answer (%s)\n%s", pods.lastFailure(), agent.log())
                .isTrue();

        assertThat(resolve("A.Svc.TEST", A))
                .as("names match case-insensitively")
                .containsExactly("10.78.0.12");
        assertThat(reaches("10.78.0.12"))
                .as("a.svc.test over IPv4 (%s)", pods.lastFailure())
                .isTrue();
        assertThat(resolve("a.svc.test", AAAA)).containsExactly("fd78:0:0:0:0:0:0:12");
        assertThat(reaches("fd78::12"))
                .as("a.svc.test over IPv6 (%s)", pods.lastFailure())
                .isTrue();

        assertThat(resolveOverTcp("tcp.svc.test", A)).as("an answer over TCP").containsExactly("10.78.0.21");
        assertThat(refused("10.78.0.21"))
                .as("answers over TCP teach nothing (H3): fail-closed")
                .isTrue();

        assertThat(resolve("other.test", A)).containsExactly("10.78.0.20");
        assertThat(refused("10.78.0.20"))
                .as("resolved, but for a name a does not watch")
                .isTrue();
        assertThat(refused("10.78.0.11")).as("an address no answer carried").isTrue();
        assertThat(refused("fd78::11")).as("an IPv6 address no answer carried").isTrue();
        assertThat(resolve("svc.test", A)).as("no records").isEmpty();
    }

    @Test
    void answersFromAServerThatIsNoConfiguredResolverTeachNothing() throws Exception {
        List<String> rogueAnswer =
                strings(DnsStubClient.udp(pods.a.inside(), ROGUE_DNS, "rogue.svc.test", A, DNS_TIMEOUT));
        assertThat(rogueAnswer).as("the rogue server answers").containsExactly("10.78.0.40");
        assertThat(refused("10.78.0.40"))
                .as("M5: learned only from --dns-resolvers\n%s", agent.log())
                .isTrue();
        assertThat(resolve("rogue.svc.test", A)).containsExactly("10.78.0.40");
        assertThat(reaches("10.78.0.40"))
                .as("the same answer from the configured resolver teaches (%s)", pods.lastFailure())
                .isTrue();
    }

    @Test
    void theFirstConnectionAfterEveryAnswerSucceeds() throws Exception {
        assertThat(refused(poolAddress(TRIES, A)))
                .as("the pool's addresses are not open by themselves")
                .isTrue();
        double dropsBefore = tcpDrops();
        for (int i = 0; i < TRIES; i++) {
            int qtype = i % 4 == 3 ? AAAA : A;
            String name = "t" + i + ".svc.test";
            List<String> answer = resolve(name, qtype);
            assertThat(answer).as("try %d: the answer for %s", i, name).hasSize(1);
            String address = answer.get(0);
            assertThat(reaches(address))
                    .as(
                            "try %d: the first connection to %s right after the answer for %s (%s)\n%s",
                            i, address, name, pods.lastFailure(), agent.log())
                    .isTrue();
        }
        // A first SYN dropped and its retransmission allowed would still connect: the agent's
        // drop count shows that no SYN of the tries was refused at all.
        assertThat(tcpDrops())
                .as("SYNs the agent dropped during the %d tries", TRIES)
                .isEqualTo(dropsBefore);
    }

    @Test
    void anAddressLeavesWhenItsTtlEndsAndItsConnectionsStay() throws Exception {
        assertThat(resolve("expire.svc.test", A)).containsExactly("10.78.0.30");
        long answered = System.nanoTime();
        assertThat(resolve("long.svc.test", A)).containsExactly("10.78.0.31");
        assertThat(resolve("zero.svc.test", A)).containsExactly("10.78.0.32");
        assertThat(reaches("10.78.0.32"))
                .as("TTL 0 is raised to --dns-min-ttl (%s)", pods.lastFailure())
                .isTrue();
        try (Socket open = pods.connectAToB("10.78.0.30", PORT, ALLOWED_TIMEOUT)) {
            assertThat(open)
                    .as("connected while 10.78.0.30 was valid (%s)", pods.lastFailure())
                    .isNotNull();
            sleepUntil(answered + 1_500_000_000L);
            assertThat(refused("10.78.0.30"))
                    .as("TTL 1 s ended: a new connection is refused")
                    .isTrue();
            assertThat(PodPair.echoes(open))
                    .as("the connection opened while it was valid stays")
                    .isTrue();
        }
        sleepUntil(answered + MAX_TTL_SECONDS * 1_000_000_000L + 500_000_000L);
        assertThat(refused("10.78.0.31"))
                .as("TTL 3600 s is cut to --dns-max-ttl %d s", MAX_TTL_SECONDS)
                .isTrue();
        assertThat(resolve("expire.svc.test", A)).containsExactly("10.78.0.30");
        assertThat(reaches("10.78.0.30"))
                .as("a new answer teaches it again (%s)", pods.lastFailure())
                .isTrue();
    }

    @Test
    void aResponseWithFiftyAnswersAndACnameChainTeachesEveryAddress() throws Exception {
        for (boolean overTcp : new boolean[] {false, true}) {
            String name = overTcp ? "many-tcp.svc.test" : "many.svc.test";
            List<String> answer = overTcp ? resolveOverTcp(name, A) : resolve(name, A);
            assertThat(answer).as("48 addresses at the end of the chain").hasSize(48);
            for (int i : new int[] {0, 19, 39, 40, 47}) {
                if (overTcp) {
                    assertThat(refused(answer.get(i)))
                            .as("%s: address %d, %s: TCP teaches nothing", name, i, answer.get(i))
                            .isTrue();
                } else {
                    assertThat(reaches(answer.get(i)))
                            .as("%s: address %d, %s (%s)", name, i, answer.get(i), pods.lastFailure())
                            .isTrue();
                }
            }
        }
        assertThat(refused("10.78.200.41"))
                .as("next to the answer's addresses, not in it")
                .isTrue();
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000L + 1);
        }
    }
}
