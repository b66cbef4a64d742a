// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The live commands against a real control plane on loopback (the real calculation on
 * deploy/examples/netpol-basic: x/a, x/b, x/c, y/*, z/* on node-1 and node-2), as a user runs
 * them: exit codes, the three output formats, and live answers equal to the offline ones.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LiveCommandsTest {
    private static final String EXAMPLE = "../deploy/examples/netpol-basic";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final YAMLMapper YAML = YAMLMapper.builder().build();

    private ControlPlane cp;
    private ManagedChannel channel;
    private final List<AutoCloseable> agents = new ArrayList<>();

    record Run(int exit, String out, String err) {}

    @BeforeAll
    void start() throws Exception {
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(Path.of(EXAMPLE), new EngineDirectoryReader()));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable a : agents) {
            a.close();
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cp.close();
    }

    private Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    private String address() {
        return "127.0.0.1:" + cp.grpcPort();
    }

    private Run live(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--control-plane");
        all.add(address());
        return run(all.toArray(String[]::new));
    }

    /** An agent's Sync stream read to InSync and reported applied, as the real agent does. */
    private void connectAgent(String node) throws Exception {
        CountDownLatch inSync = new CountDownLatch(1);
        long[] sequence = new long[1];
        Instant started = Instant.now().minusSeconds(3600);
        var call = new io.grpc.stub.ClientResponseObserver<SyncRequest, ToAgent>() {
            io.grpc.stub.ClientCallStreamObserver<SyncRequest> requests;

            @Override
            public void beforeStart(io.grpc.stub.ClientCallStreamObserver<SyncRequest> r) {
                requests = r;
            }

            @Override
            public void onNext(ToAgent value) {
                if (value.hasInSync()) {
                    sequence[0] = value.getSequence();
                    inSync.countDown();
                }
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        };
        PolicySyncGrpc.newStub(channel)
                .sync(
                        SyncRequest.newBuilder()
                                .setNode(node)
                                .setAgentVersion("9.9.9")
                                .setAgentStartTime(com.google.protobuf.Timestamp.newBuilder()
                                        .setSeconds(started.getEpochSecond()))
                                .build(),
                        call);
        assertThat(inSync.await(30, TimeUnit.SECONDS)).isTrue();
        PolicySyncGrpc.newBlockingStub(channel)
                .reportApplied(AppliedReport.newBuilder()
                        .setNode(node)
                        .setAppliedSequence(sequence[0])
                        .build());
        agents.add(() -> call.requests.cancel("test over", null));
    }

    @Test
    void statusExitsNonZeroUntilEveryNodeIsInSync() throws Exception {
        Run before = live("status");
        assertThat(before.exit()).as(before.err()).isEqualTo(1);
        assertThat(before.out()).contains("node-1").contains("node-2").contains("disconnected");
        assertThat(before.err()).contains("not in sync");

        connectAgent("node-1");
        connectAgent("node-2");
        Run after = live("status");
        assertThat(after.exit()).as(after.out() + after.err()).isZero();
        List<String> lines = after.out().lines().toList();
        assertThat(lines.get(0))
                .startsWith("NODE ")
                .contains("STATE", "APPLIED/SENT", "LAG", "P50", "P99", "VERSION", "UPTIME", "LAST CONTACT");
        String node1 =
                lines.stream().filter(l -> l.startsWith("node-1")).findFirst().orElseThrow();
        assertThat(node1).contains("in-sync").contains("9.9.9").containsPattern("1h0m|59m");
        // Aligned columns: every row's STATE starts where the header's does.
        int state = lines.get(0).indexOf("STATE");
        lines.stream()
                .filter(l -> l.startsWith("node-"))
                .forEach(l -> assertThat(l.substring(state)).matches("^\\S.*"));
    }

    @Test
    void statusCannotAskAnAbsentControlPlane() {
        Run r = run("status", "--control-plane", "127.0.0.1:1", "--timeout", "PT5S");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).contains("127.0.0.1:1").contains("UNAVAILABLE");
    }

    Stream<Arguments> connections() {
        return Stream.of(
                Arguments.of("z/a", "x/a", "80", "TCP", 1), // default deny in x
                Arguments.of("y/a", "x/a", "80", "TCP", 0), // named port serve-80-tcp from ns y
                Arguments.of("y/a", "10.244.1.10", "80", "tcp", 0),
                Arguments.of("y/c", "y/a", "80", "TCP", 1), // y/c egress only to x/a
                Arguments.of("x/c", "x/b", "9000", "UDP", 0),
                Arguments.of("x/a", "x/a", "81", "TCP", 0)); // loopback
    }

    @ParameterizedTest(name = "{0} -> {1} {2}/{3}")
    @MethodSource("connections")
    void explainLiveSaysWhatExplainOfflineSays(String from, String to, String port, String protocol, int exit)
            throws Exception {
        for (String format : List.of("json", "yaml", "table")) {
            Run offline = run(
                    "explain",
                    "--manifests",
                    EXAMPLE,
                    "--from",
                    from,
                    "--to",
                    to,
                    "--port",
                    port,
                    "--protocol",
                    protocol,
                    "-o",
                    format);
            Run live =
                    live("explain", "--from", from, "--to", to, "--port", port, "--protocol", protocol, "-o", format);
            assertThat(offline.exit()).as(format + offline.err()).isEqualTo(exit);
            assertThat(live.exit()).as(format + live.err()).isEqualTo(exit);
            assertThat(live.out()).as(format).isEqualTo(offline.out());
            if (format.equals("yaml")) {
                assertThat(YAML.readTree(live.out()))
                        .isEqualTo(JSON.readTree(live(
                                        "explain",
                                        "--from",
                                        from,
                                        "--to",
                                        to,
                                        "--port",
                                        port,
                                        "--protocol",
                                        protocol,
                                        "-o",
                                        "json")
                                .out()));
            }
        }
    }

    @Test
    void explainTextHasOneLinePerTierAndTheVerdictOnce() {
        Run r = live("explain", "--from", "z/a", "--to", "x/a", "--port", "80", "--protocol", "TCP");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out()).isEqualTo("""
                z/a (10.244.3.10) -> x/a (10.244.1.10) 80/TCP: denied
                  egress   z/a on node node-1: not isolated (no policy selects it for egress)
                  ingress  x/a on node node-1: isolated by x/allow-a-from-y-web, x/default-deny-ingress
                    tier default: no rule matched, the tier's default denies
                """);
        Run allowed = live("explain", "--from", "y/a", "--to", "x/a", "--port", "80", "--protocol", "TCP");
        assertThat(allowed.out())
                .contains("80/TCP: allowed")
                .contains("    tier default: allowed by x/allow-a-from-y-web ingress[0]\n")
                .doesNotContain("denied")
                .doesNotContain("ALLOW");
        assertThat(allowed.out().lines().filter(l -> l.endsWith(": allowed")))
                .as("the verdict is said once")
                .hasSize(1);
    }

    @ParameterizedTest
    @MethodSource("formats")
    void matrixLiveIsTheOfflineMatrix(String format) {
        Run offline = run("matrix", "--manifests", EXAMPLE, "--port", "80", "-o", format);
        Run live = live("matrix", "--port", "80", "-o", format);
        assertThat(live.exit()).as(live.err()).isZero();
        assertThat(live.out()).isEqualTo(offline.out());
        if (format.equals("table")) {
            assertThat(live.out().lines().findFirst().orElseThrow()).startsWith("80/TCP ");
        }
        // -n: the same cells among the pods of those namespaces, live as offline.
        Run offlineXz = run("matrix", "--manifests", EXAMPLE, "--port", "80", "-n", "x,z", "-o", format);
        Run liveXz = live("matrix", "--port", "80", "-n", "x", "--namespace", "z", "-o", format);
        assertThat(liveXz.exit()).as(liveXz.err()).isZero();
        assertThat(liveXz.out()).isEqualTo(offlineXz.out()).contains("z/a").doesNotContain("y/a");
    }

    Stream<String> formats() {
        return Stream.of("table", "json", "yaml");
    }

    @Test
    void policiesOfAPodPerTierAndDirectionAndItsSets() throws Exception {
        Run r = live("policies", "x/a");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .startsWith("x/a on node node-1 (10.244.1.10), labels pod=a\n")
                .contains("default   ingress     x/allow-a-from-y-web, x/default-deny-ingress (no match: deny)\n")
                .contains("-         egress      nothing: not isolated")
                .contains("(named port)") // x/a's serve-80-tcp: x/allow-a-from-y-web's port
                .contains("IN SET")
                .contains("pods of namespace x with pod in (a), port serve-80-tcp/TCP")
                .contains("x/allow-b-from-x ingress[0]") // x/a is a peer of x/b's ingress (any pod of x)
                .contains("y/c-egress-to-xa egress[0]") // and of y/c's egress
                .doesNotContain("s:"); // readable definitions, not hashes

        JsonNode json = JSON.readTree(live("policies", "x/a", "-o", "json").out());
        assertThat(json.get("id").get("pod").asText()).isEqualTo("a");
        assertThat(json.get("node").asText()).isEqualTo("node-1");
        assertThat(json.get("memberOf").size()).isPositive();
        assertThat(json.get("memberOf").get(0).get("description").asText()).isNotEmpty();
        assertThat(YAML.readTree(live("policies", "x/a", "-o", "yaml").out())).isEqualTo(json);

        Run unknown = live("policies", "x/nope");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("NOT_FOUND").contains("x/nope");
    }

    @Test
    void liveAndOfflineInputsExcludeEachOther() {
        assertThat(live(
                                "explain",
                                "--manifests",
                                EXAMPLE,
                                "--from",
                                "x/a",
                                "--to",
                                "x/b",
                                "--port",
                                "80",
                                "--protocol",
                                "TCP")
                        .exit())
                .isEqualTo(2);
        Run neither = run("matrix");
        assertThat(neither.exit()).isEqualTo(2);
        assertThat(neither.err()).contains("--manifests DIR").contains("--control-plane");
    }

    @Test
    void explainAndMatrixAskTheControlPlaneOfTheEnvironmentAsStatusDoes() {
        ControlPlaneClientOptions.environment = name -> name.equals(ControlPlaneClientOptions.ENV) ? address() : null;
        try {
            Run explain = run("explain", "--from", "z/a", "--to", "x/a", "--port", "80", "--protocol", "TCP");
            assertThat(explain.exit()).as(explain.err()).isEqualTo(1);
            assertThat(explain.out())
                    .isEqualTo(live("explain", "--from", "z/a", "--to", "x/a", "--port", "80", "--protocol", "TCP")
                            .out());
            Run matrix = run("matrix", "--port", "80");
            assertThat(matrix.exit()).as(matrix.err()).isZero();
            assertThat(matrix.out()).isEqualTo(live("matrix", "--port", "80").out());
            // --manifests still reads manifests: the environment only names the default control plane.
            Run offline = run("matrix", "--manifests", EXAMPLE, "--port", "80");
            assertThat(offline.exit()).as(offline.err()).isZero();
            assertThat(offline.out()).isEqualTo(matrix.out());
        } finally {
            ControlPlaneClientOptions.environment = System::getenv;
        }
        Run neither = run("matrix");
        assertThat(neither.err()).contains("$KUBE_VERDICT_CONTROL_PLANE");
    }

    @Test
    void minusNNamesTheNamespaceOfBarePodNamesAndWideAddsColumns() {
        Run qualified = live("policies", "x/a");
        Run bare = live("policies", "-n", "x", "a");
        assertThat(bare.exit()).as(bare.err()).isZero();
        assertThat(bare.out()).isEqualTo(qualified.out());
        Run explained = live("explain", "-n", "x", "--from", "c", "--to", "y/a", "--port", "80", "--protocol", "tcp");
        assertThat(explained.out())
                .isEqualTo(live("explain", "--from", "x/c", "--to", "y/a", "--port", "80", "--protocol", "TCP")
                        .out());

        Run wide = live("status", "-o", "wide");
        String header = wide.out().lines().findFirst().orElseThrow();
        assertThat(header).contains("LAST CONTACT", "SAMPLES", "SOURCE REVISION", "AGENT STARTED");
        assertThat(live("status").out().lines().findFirst().orElseThrow()).doesNotContain("SOURCE REVISION");
        assertThat(wide.out()).contains("source revision ");
    }

    /** Uploads verdicts to ports 1001..1003 as node-1's agent would (addresses of no pod: relayed as they are). */
    private void uploadVerdicts() {
        var upload = PolicySyncGrpc.newStub(channel).reportVerdicts(new io.grpc.stub.StreamObserver<>() {
            @Override
            public void onNext(io.kubeverdict.proto.v1.VerdictDemand value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
        var batch = io.kubeverdict.proto.v1.VerdictUpload.newBuilder().setNode("node-1");
        long now = Instant.now().getEpochSecond();
        for (int port = 1001; port <= 1003; port++) {
            batch.addEvents(io.kubeverdict.proto.v1.VerdictEvent.newBuilder()
                    .setTime(com.google.protobuf.Timestamp.newBuilder().setSeconds(now - 1004 + port))
                    .setExplanation(io.kubeverdict.proto.v1.Explanation.newBuilder()
                            .setVerdict(io.kubeverdict.proto.v1.Verdict.VERDICT_DENY)
                            .setTuple(io.kubeverdict.proto.v1.Tuple.newBuilder()
                                    .setSrcIp("192.0.2.1")
                                    .setDstIp("192.0.2.2")
                                    .setProtocol(6)
                                    .setDstPort(port))));
        }
        upload.onNext(batch.build());
        agents.add(upload::onCompleted);
    }

    private static List<String> rows(Run r) {
        return r.out().lines().skip(1).toList();
    }

    @Test
    void observeLastAndSinceShowThePastVerdictsTheControlPlaneHolds() throws Exception {
        uploadVerdicts();
        Run all = null;
        for (int tries = 0; tries < 300; tries++) { // the upload reaches the relay on its own thread
            all = live("observe", "--node", "node-1", "--since", "1h", "--no-follow");
            if (rows(all).size() >= 3) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(all.exit()).as(all.err()).isZero();
        assertThat(rows(all)).hasSize(3);
        Run last = live("observe", "--node", "node-1", "--verdict", "denied", "--last", "2"); // stops at the past
        assertThat(last.exit()).as(last.err()).isZero();
        assertThat(rows(last)).hasSize(2);
        assertThat(rows(last).get(0)).contains("1002/");
        assertThat(rows(last).get(1)).contains("1003/");
        Run allowedOnly = live("observe", "--node", "node-1", "--verdict", "allowed", "--last", "2", "--no-follow");
        assertThat(rows(allowedOnly)).as("the same filters as live verdicts").isEmpty();
        assertThat(live("observe", "--last", "-1").exit()).isEqualTo(ExitCodes.USAGE);
        assertThat(live("observe", "--since", "0s").exit()).isEqualTo(ExitCodes.USAGE);
    }
}
