// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.agent.dns.LearnedAddressBook;
import io.kubeverdict.agent.dns.LearnedSet;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.runtime.grpc.GrpcServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kube-verdict policies NS/POD for a pod with domain-name rules: the control plane names the
 * patterns (its real calculation of an AdminNetworkPolicy), and with --agent the node's agent
 * (its real inspection service on loopback, enforcing the control plane's snapshot) adds what the
 * pod learned, with the name asked and the time left.
 */
class PoliciesWithAgentTest {
    @TempDir
    Path manifests;

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final StateHolder state = new StateHolder(0, new LearnedAddressBook(clock::get, 64));
    private ControlPlane cp;
    private GrpcServer agent;
    private VerdictFeed feed;

    record Run(int exit, String out, String err) {}

    @BeforeEach
    void start() throws Exception {
        Files.writeString(manifests.resolve("cluster.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: client}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.1}
                ---
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata: {name: api-only}
                spec:
                  priority: 1
                  subject: {pods: {namespaceSelector: {}, podSelector: {matchLabels: {}}}}
                  egress:
                  - {name: to-api, action: Allow, to: [{domainNames: ["api.test"]}]}
                  - {name: rest, action: Deny, to: [{networks: ["0.0.0.0/0"]}]}
                """);
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(manifests, new EngineDirectoryReader()));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
        NodeSnapshot n1;
        try {
            n1 = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getSnapshot(GetSnapshotRequest.newBuilder().setNode("n1").build());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(n1, 1);
        feed = new VerdictFeed(16, state::generation);
        agent = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .service(new AgentInspectionService(
                        new AgentIdentity("n1", "test", "xtables-nfqueue", 0, true),
                        state,
                        new SyncStatus(),
                        Optional::empty,
                        feed))
                .build()
                .start();
    }

    @AfterEach
    void stop() throws Exception {
        agent.close();
        feed.close();
        cp.close();
    }

    private Run policies(String... extra) {
        List<String> args =
                new ArrayList<>(List.of("policies", "x/client", "--control-plane", "127.0.0.1:" + cp.grpcPort()));
        args.addAll(List.of(extra));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    /** What the DNS thread does for an answer to the pod: the address into its set for the name's peer. */
    private void learn(String name, String address, long ttlSeconds) {
        LearnedAddressBook.View view = state.learned();
        IpAddress ip = IpAddress.parse(address);
        int client = view.index()
                .endpointAt(IpAddress.V4, 0, IpAddress.parse("10.0.0.1").lo());
        LearnedSet set = view.set(client, view.watchesOf(client)[0]);
        byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        set.learn(ip.family(), ip.hi(), ip.lo(), clock.get() + ttlSeconds * 1_000_000_000L, bytes, 0, bytes.length);
    }

    @Test
    void thePatternsFromTheControlPlaneAndWhatThePodLearnedFromItsAgent() {
        Run plain = policies();
        assertThat(plain.exit()).as(plain.err()).isZero();
        assertThat(plain.out()).contains("egress to domain names api.test: the addresses are learned at run time");

        Run none = policies("--agent", "127.0.0.1:" + agent.port());
        assertThat(none.exit()).as(none.err()).isZero();
        assertThat(none.out()).contains("DOMAIN NAMES").contains("nothing learned yet");

        learn("api.test", "192.0.2.7", 30);
        Run learned = policies("--agent", "127.0.0.1:" + agent.port());
        assertThat(learned.exit()).as(learned.err()).isZero();
        assertThat(learned.out()).containsPattern("api\\.test +api\\.test +192\\.0\\.2\\.7 +30s");

        Run json = policies("--agent", "127.0.0.1:" + agent.port(), "-o", "json");
        assertThat(json.exit()).isZero();
        assertThat(json.out())
                .contains("\"domainWatches\"")
                .contains("\"learned\"")
                .contains("\"192.0.2.7\"");

        clock.addAndGet(31_000_000_000L);
        assertThat(policies("--agent", "127.0.0.1:" + agent.port()).out())
                .contains("nothing learned yet")
                .doesNotContain("192.0.2.7");
    }

    @Test
    void anAgentThatCannotBeAskedIsReported() {
        Run r = policies("--agent", "127.0.0.1:1", "--timeout", "PT5S");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).contains("cannot ask the agent at 127.0.0.1:1");
    }
}
