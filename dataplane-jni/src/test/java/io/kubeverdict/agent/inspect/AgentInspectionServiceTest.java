// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.dns.LearnedAddressBook;
import io.kubeverdict.agent.dns.LearnedSet;
import io.kubeverdict.agent.metrics.VerdictWatchMetrics;
import io.kubeverdict.agent.nft.CachedFlows;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.proto.v1.CachedFlow;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.LearnedDomains;
import io.kubeverdict.proto.v1.ListCachedFlowsRequest;
import io.kubeverdict.proto.v1.ListCachedFlowsResponse;
import io.kubeverdict.proto.v1.ListEndpointsRequest;
import io.kubeverdict.proto.v1.ListEndpointsResponse;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WatchVerdictsRequest;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** AgentInspection, reflection and health through a real gRPC client on loopback. */
class AgentInspectionServiceTest {
    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final StateHolder state = new StateHolder(0, new LearnedAddressBook(clock::get, 16));
    private final SyncStatus sync = new SyncStatus();
    private VerdictFeed feed;
    private final AtomicReference<Optional<List<CachedFlows.Flow>>> cachedFlows =
            new AtomicReference<>(Optional.empty());
    private GrpcServer server;
    private ManagedChannel channel;
    private AgentInspectionGrpc.AgentInspectionBlockingStub inspect;

    @BeforeEach
    void start() throws Exception {
        feed = new VerdictFeed(256, state::generation);
        AgentIdentity identity = new AgentIdentity("node-1", "test", "xtables-nfqueue", 7, true);
        server = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .service(new AgentInspectionService(
                        identity,
                        state,
                        sync,
                        () -> java.util.Optional.of(new QueueCounters(7, 99, 10, 2, 128, 2, 1, 500)),
                        feed,
                        cachedFlows::get))
                .build()
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                .usePlaintext()
                .build();
        inspect = AgentInspectionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        feed.close();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    private void enforce() throws Exception {
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.allowFromB(), 12);
    }

    @Test
    void statusBeforeAndAfterTheFirstState() throws Exception {
        AgentStatus before = inspect.getStatus(AgentStatusRequest.getDefaultInstance());
        assertThat(before.getNode()).isEqualTo("node-1");
        assertThat(before.getInSync()).isFalse();
        assertThat(before.getKernelPath()).isEqualTo("xtables-nfqueue");
        assertThat(before.getQueueId()).isEqualTo(7);
        assertThat(before.getFailOpen()).isTrue();
        assertThat(before.getQueueTotal()).isEqualTo(10);
        assertThat(before.getQueueDropped()).isEqualTo(2);
        assertThat(before.getQueueUserDropped()).isEqualTo(1);
        assertThat(before.getEndpoints()).isZero();
        assertThatThrownBy(() -> inspect.explain(ExplainRequest.newBuilder()
                        .setTuple(tuple("10.0.0.2", "10.0.0.1", 80))
                        .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION));

        enforce();
        AgentStatus after = inspect.getStatus(AgentStatusRequest.getDefaultInstance());
        assertThat(after.getEndpoints()).isEqualTo(3);
        assertThat(after.getPolicies()).isEqualTo(1);
        assertThat(after.getIpSets()).isEqualTo(1);
        assertThat(inspect.listEndpoints(ListEndpointsRequest.getDefaultInstance())
                        .getEndpointsList())
                .extracting(e -> e.getId().getPod())
                .containsExactly("a", "b", "c");
    }

    @Test
    void listsCachedFlowsMostConnectionsFirstWithWhatDecidesThem() throws Exception {
        assertThat(inspect.listCachedFlows(ListCachedFlowsRequest.getDefaultInstance())
                        .getCounted())
                .as("an agent without cache counters says so")
                .isFalse();
        enforce();
        cachedFlows.set(Optional.of(List.of(
                new CachedFlows.Flow(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), 6, 80, 5),
                new CachedFlows.Flow(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), 17, 80, 9))));

        ListCachedFlowsResponse all = inspect.listCachedFlows(ListCachedFlowsRequest.getDefaultInstance());
        assertThat(all.getCounted()).isTrue();
        assertThat(all.getKeys()).isEqualTo(2);
        assertThat(all.getFlowsList()).extracting(CachedFlow::getConnections).containsExactly(9L, 5L);
        CachedFlow tcp = all.getFlows(1);
        assertThat(tcp.getTuple().getProtocol()).isEqualTo(6);
        assertThat(tcp.getTuple().getDstPort()).isEqualTo(80);
        assertThat(tcp.getExplanation().getCached()).isTrue();
        assertThat(tcp.getExplanation().getIngress().getPolicy().getName()).isEqualTo("x/allow-from-b");

        ListCachedFlowsResponse first = inspect.listCachedFlows(
                ListCachedFlowsRequest.newBuilder().setLimit(1).build());
        assertThat(first.getKeys()).isEqualTo(2);
        assertThat(first.getFlowsList()).extracting(CachedFlow::getConnections).containsExactly(9L);
    }

    @Test
    void explainsWithTheCurrentIndex() throws Exception {
        enforce();
        Explanation allowed = inspect.explain(ExplainRequest.newBuilder()
                .setTuple(tuple("10.0.0.2", "10.0.0.1", 80))
                .build());
        assertThat(allowed.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(allowed.getIngress().getPolicy().getName()).isEqualTo("x/allow-from-b");
        assertThat(allowed.getIngress().getRuleId()).isEqualTo("ingress[0]");

        Explanation denied = inspect.explain(ExplainRequest.newBuilder()
                .setFrom("x/c")
                .setTo("x/a")
                .setTuple(Tuple.newBuilder().setProtocol(Protocol.TCP_VALUE).setDstPort(80))
                .build());
        assertThat(denied.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(denied.getSource().getPod()).isEqualTo("c");
        assertThat(denied.getDestination().getPod()).isEqualTo("a");
        assertThat(denied.getIngress().getIsolated()).isTrue();

        assertThatThrownBy(() -> inspect.explain(ExplainRequest.newBuilder()
                        .setTuple(tuple("nonsense", "10.0.0.1", 80))
                        .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        assertThatThrownBy(() -> inspect.explain(ExplainRequest.newBuilder()
                        .setFrom("y/nowhere")
                        .setTo("x/a")
                        .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    }

    @Test
    void learnedAddressesShowWithTheirNameAndExpiryAndExplainNamesTheDomain() throws Exception {
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.domainNames(), 3);
        LearnedAddressBook.View view = state.learned();
        int client = view.index()
                .endpointAt(IpAddress.V4, 0, IpAddress.parse("10.0.0.1").lo());
        LearnedSet svc = view.set(client, view.watchesOf(client)[1]);
        byte[] name = "a.svc.test".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        long in30s = clock.get() + 30_000_000_000L;
        svc.learn(IpAddress.V4, 0, IpAddress.parse("192.0.2.30").lo(), in30s, name, 0, name.length);
        svc.learn(
                IpAddress.V6,
                IpAddress.parse("2001:db8::30").hi(),
                IpAddress.parse("2001:db8::30").lo(),
                in30s,
                name,
                0,
                name.length);

        ListEndpointsResponse listed = inspect.listEndpoints(ListEndpointsRequest.getDefaultInstance());
        assertThat(listed.getLearnedList())
                .extracting(
                        d -> d.getEndpoint().getPod() + " " + d.getDomainNames().getPatternsList())
                .containsExactly("client [api.test]", "client [*.svc.test]");
        LearnedDomains learned = listed.getLearned(1);
        assertThat(learned.getAddressesList())
                .extracting(a -> a.getName() + " " + a.getAddress() + " "
                        + a.getExpiresIn().getSeconds())
                .containsExactly("a.svc.test 192.0.2.30 30", "a.svc.test 2001:db8::30 30");
        AgentStatus status = inspect.getStatus(AgentStatusRequest.getDefaultInstance());
        assertThat(status.getLearnedAddresses()).isEqualTo(2);
        assertThat(status.getLearnedSets()).isEqualTo(2);

        Explanation viaName = inspect.explain(ExplainRequest.newBuilder()
                .setTuple(tuple("10.0.0.1", "192.0.2.30", 443))
                .build());
        assertThat(viaName.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(viaName.getEgress().getLearnedDomain()).isEqualTo("a.svc.test");
        assertThat(viaName.getEgress().getReason())
                .contains("admin/names egress[1]")
                .contains("a.svc.test");

        clock.addAndGet(31_000_000_000L); // expired: gone from inspection and from the verdict
        assertThat(inspect.listEndpoints(ListEndpointsRequest.getDefaultInstance())
                        .getLearned(1)
                        .getAddressesCount())
                .isZero();
        Explanation expired = inspect.explain(ExplainRequest.newBuilder()
                .setTuple(tuple("10.0.0.1", "192.0.2.30", 443))
                .build());
        assertThat(expired.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(expired.getEgress().getLearnedDomain()).isEmpty();
    }

    @Test
    void healthTurnsServingWhenTold() {
        HealthGrpc.HealthBlockingStub health =
                HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
        assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus())
                .isEqualTo(ServingStatus.NOT_SERVING);
        server.setServing(true);
        assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus())
                .isEqualTo(ServingStatus.SERVING);
        assertThat(health.check(HealthCheckRequest.newBuilder()
                                .setService(AgentInspectionGrpc.SERVICE_NAME)
                                .build())
                        .getStatus())
                .isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void reflectionListsTheServicesInBothProtocolVersions() throws Exception {
        BlockingQueue<List<String>> v1 = new LinkedBlockingQueue<>();
        var v1Call = io.grpc.reflection.v1.ServerReflectionGrpc.newStub(channel)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(io.grpc.reflection.v1.ServerReflectionResponse r) {
                        v1.add(r.getListServicesResponse().getServiceList().stream()
                                .map(s -> s.getName())
                                .toList());
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        v1Call.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
                .setListServices("")
                .build());
        assertThat(v1.poll(10, TimeUnit.SECONDS)).contains("kubeverdict.v1.AgentInspection", "grpc.health.v1.Health");
        v1Call.onCompleted();

        BlockingQueue<List<String>> v1alpha = new LinkedBlockingQueue<>();
        @SuppressWarnings("deprecation")
        var alphaCall = io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse r) {
                        v1alpha.add(r.getListServicesResponse().getServiceList().stream()
                                .map(s -> s.getName())
                                .toList());
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        alphaCall.onNext(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setListServices("")
                .build());
        assertThat(v1alpha.poll(10, TimeUnit.SECONDS)).contains("kubeverdict.v1.AgentInspection");
        alphaCall.onCompleted();
    }

    @Test
    void watchVerdictsStreamsFilteredExplanations() throws Exception {
        enforce();
        BlockingQueue<Explanation> denied = new LinkedBlockingQueue<>();
        BlockingQueue<Explanation> ofB = new LinkedBlockingQueue<>();
        AgentInspectionGrpc.AgentInspectionStub async = AgentInspectionGrpc.newStub(channel);
        async.watchVerdicts(
                WatchVerdictsRequest.newBuilder()
                        .setVerdict(Verdict.VERDICT_DENY)
                        .build(),
                collect(denied));
        async.watchVerdicts(WatchVerdictsRequest.newBuilder().setIp("10.0.0.2").build(), collect(ofB));
        SyncClientAwait.until(() -> feed.watchers() == 2);

        // The verdict loop's side: one thread, one reused tuple, decisions from the enforced index.
        Thread loop = new Thread(() -> {
            PacketTuple p = new PacketTuple();
            for (String src : new String[] {"10.0.0.2", "10.0.0.3", "10.0.0.2"}) {
                p.set(IpAddress.parse(src), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);
                feed.publish(p, state.decide(p));
            }
        });
        loop.start();
        loop.join();

        Explanation d = denied.poll(10, TimeUnit.SECONDS);
        assertThat(d).isNotNull();
        assertThat(d.getTuple().getSrcIp()).isEqualTo("10.0.0.3");
        assertThat(d.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(d.getIngress().getReason()).contains("no rule matched");

        Explanation b1 = ofB.poll(10, TimeUnit.SECONDS);
        Explanation b2 = ofB.poll(10, TimeUnit.SECONDS);
        assertThat(List.of(b1, b2)).allSatisfy(e -> {
            assertThat(e.getTuple().getSrcIp()).isEqualTo("10.0.0.2");
            assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
            assertThat(e.getIngress().getPolicy().getName()).isEqualTo("x/allow-from-b");
        });
        assertThat(denied.poll(200, TimeUnit.MILLISECONDS)).isNull();
        assertThat(ofB.poll(1, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void watchedVerdictsNameTheAdminPassThatLedToTheDecision() throws Exception {
        NodeSnapshot base = SnapshotFixtures.allowFromB();
        NodeSnapshot.Builder tiered = base.toBuilder()
                .addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("admin").setName("ops-guard"))
                        .setPolicy(Policy.newBuilder()
                                .addInboundRules(Rule.newBuilder()
                                        .setAction(Action.PASS)
                                        .setRuleId("ingress[0] (b-to-np)")
                                        .addPeers(Peer.newBuilder().setIpSetId("set-b")))));
        WorkloadEndpoint.Builder a = tiered.getEndpointsBuilder(0).getEndpointBuilder();
        List<TierInfo> tiers = List.copyOf(a.getTiersList());
        a.clearTiers()
                .addTiers(TierInfo.newBuilder()
                        .setName("admin")
                        .setDefaultAction(Action.PASS)
                        .addIngressPolicies("ops-guard"))
                .addAllTiers(tiers);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(tiered.build(), 13);
        BlockingQueue<Explanation> seen = new LinkedBlockingQueue<>();
        AgentInspectionGrpc.newStub(channel)
                .watchVerdicts(
                        WatchVerdictsRequest.newBuilder().setIp("10.0.0.2").build(), collect(seen));
        SyncClientAwait.until(() -> feed.watchers() == 1);

        PacketTuple p =
                new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);
        feed.publish(p, state.decide(p));

        Explanation e = seen.poll(10, TimeUnit.SECONDS);
        assertThat(e).isNotNull();
        assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(e.getIngress().getReason())
                .isEqualTo(
                        "passed by admin/ops-guard ingress[0] (b-to-np) → allowed by default/x/allow-from-b ingress[0]");
        assertThat(e.getIngress().getPassedList())
                .singleElement()
                .satisfies(step -> assertThat(step.getAction()).isEqualTo(Action.PASS))
                .satisfies(step -> assertThat(step.getPolicy().getName()).isEqualTo("ops-guard"));
        assertThat(e.getCached()).as("published without the cache").isFalse();

        feed.publish(p, state.decide(p), true);
        Explanation cached = seen.poll(10, TimeUnit.SECONDS);
        assertThat(cached).isNotNull();
        assertThat(cached.getCached()).as("the verdict cache took the key").isTrue();
    }

    /**
     * Audit L7: inspection is on the node's loopback, which every hostNetwork pod shares; the
     * number of WatchVerdicts streams is bounded (each costs an explanation per verdict), and
     * refusals are counted.
     */
    @Test
    void watchVerdictsStreamsAreBoundedAndCounted() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        VerdictWatchMetrics.register(registry, feed);
        AgentInspectionGrpc.AgentInspectionStub async = AgentInspectionGrpc.newStub(channel);
        List<Context.CancellableContext> open = new ArrayList<>();
        for (int i = 0; i < VerdictFeed.MAX_WATCH_STREAMS; i++) {
            Context.CancellableContext call = Context.current().withCancellation();
            call.run(() -> async.watchVerdicts(
                    WatchVerdictsRequest.getDefaultInstance(), collect(new LinkedBlockingQueue<>())));
            open.add(call);
        }
        SyncClientAwait.until(() -> feed.watchers() == VerdictFeed.MAX_WATCH_STREAMS);

        Iterator<Explanation> refused = AgentInspectionGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .watchVerdicts(WatchVerdictsRequest.getDefaultInstance());
        assertThatThrownBy(refused::hasNext).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(e.getStatus().getDescription()).contains("WatchVerdicts");
        });
        assertThat(registry.get("kubeverdict_agent_verdict_watch_streams")
                        .gauge()
                        .value())
                .isEqualTo(VerdictFeed.MAX_WATCH_STREAMS);
        assertThat(registry.get("kubeverdict_agent_verdict_watch_refused")
                        .functionCounter()
                        .count())
                .isEqualTo(1);

        // A stream that ends makes room for another; the control plane's upload is not counted.
        AutoCloseable upload = feed.subscribe(Verdict.VERDICT_UNSPECIFIED, new VerdictFeed.Sink() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void onNext(Explanation verdict) {}
        });
        open.remove(0).cancel(null);
        SyncClientAwait.until(() -> feed.watchers() == VerdictFeed.MAX_WATCH_STREAMS);
        Context.CancellableContext again = Context.current().withCancellation();
        again.run(() ->
                async.watchVerdicts(WatchVerdictsRequest.getDefaultInstance(), collect(new LinkedBlockingQueue<>())));
        open.add(again);
        SyncClientAwait.until(() -> feed.watchers() == VerdictFeed.MAX_WATCH_STREAMS + 1);
        upload.close();
        open.forEach(c -> c.cancel(null));
    }

    @Test
    void anUnwatchedFeedTakesNothing() {
        PacketTuple p =
                new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);
        for (int i = 0; i < 10_000; i++) {
            feed.publish(p, 1);
        }
        assertThat(feed.dropped()).isZero();
    }

    private static StreamObserver<Explanation> collect(BlockingQueue<Explanation> into) {
        return new StreamObserver<>() {
            @Override
            public void onNext(Explanation e) {
                into.add(e);
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        };
    }

    private static Tuple tuple(String src, String dst, int port) {
        return Tuple.newBuilder()
                .setSrcIp(src)
                .setDstIp(dst)
                .setProtocol(Protocol.TCP_VALUE)
                .setDstPort(port)
                .build();
    }

    /** Polling wait for conditions other threads make true. */
    static final class SyncClientAwait {
        static void until(java.util.function.BooleanSupplier condition) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("condition not met within 10 s");
                }
                Thread.sleep(10);
            }
        }
    }
}
