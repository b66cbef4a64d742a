// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.proto.v1.VerdictUpload;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Audit L10: an agent speaks for its own node only. Its events may name its own pods; a pod the
 * control plane places on another node makes the event a lie, which is dropped and counted, and
 * the control plane names the far side by address only for events that involve the reporting node.
 */
class VerdictRelayTest {
    private final SnapshotHub hub = new SnapshotHub();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final VerdictRelay relay =
            new VerdictRelay(hub, NodeAuthorizer.allowAll(), new ControlPlaneMetrics(registry));
    private final List<VerdictEvent> observed = new ArrayList<>();

    VerdictRelayTest() {
        hub.publish(node("n1", "x", "mine", "10.0.1.5"), 0);
        hub.publish(node("n2", "y", "theirs", "10.0.2.7"), 0);
        hub.publish(node("n3", "z", "other", "10.0.3.9"), 0);
        relay.observe(ObserveVerdictsRequest.getDefaultInstance(), new Fake<>() {
            @Override
            public void onNext(ObservedVerdict v) {
                if (v.hasEvent()) {
                    observed.add(v.getEvent());
                }
            }
        });
    }

    private static NodeSnapshot node(String node, String namespace, String pod, String ip) {
        return NodeSnapshot.newBuilder()
                .setNode(node)
                .addEndpoints(Endpoint.newBuilder()
                        .setId(id(namespace, pod))
                        .setEndpoint(WorkloadEndpoint.newBuilder().addIps(ip)))
                .build();
    }

    private static EndpointId id(String namespace, String pod) {
        return EndpointId.newBuilder().setNamespace(namespace).setPod(pod).build();
    }

    private static VerdictEvent event(String src, String dst, EndpointId source, EndpointId destination) {
        Explanation.Builder x = Explanation.newBuilder()
                .setTuple(Tuple.newBuilder()
                        .setSrcIp(src)
                        .setDstIp(dst)
                        .setProtocol(6)
                        .setDstPort(80));
        if (source != null) {
            x.setSource(source);
        }
        if (destination != null) {
            x.setDestination(destination);
        }
        return VerdictEvent.newBuilder().setExplanation(x).build();
    }

    private void upload(String node, VerdictEvent... events) {
        StreamObserver<VerdictUpload> in = relay.upload(new Fake<>());
        in.onNext(VerdictUpload.newBuilder()
                .setNode(node)
                .addAllEvents(List.of(events))
                .build());
    }

    @Test
    void anEventOfItsOwnPodIsRelayedWithTheFarSideNamed() {
        upload("n1", event("10.0.1.5", "10.0.2.7", id("x", "mine"), null));
        assertThat(observed).singleElement().satisfies(e -> {
            assertThat(e.getNode()).isEqualTo("n1");
            assertThat(e.getExplanation().getDestination()).isEqualTo(id("y", "theirs"));
        });
    }

    @Test
    void anEventNamingAPodOfAnotherNodeIsDroppedAndCounted() {
        upload(
                "n1",
                event("10.0.2.7", "10.0.3.9", id("y", "theirs"), id("z", "other")),
                event("10.0.1.5", "10.0.3.9", id("x", "mine"), id("z", "other")));
        assertThat(observed).isEmpty();
        assertThat(registry.get("kubeverdict_verdict_events_refused_total")
                        .counter()
                        .count())
                .isEqualTo(2);
    }

    @Test
    void anEventWithNoSideOnTheReportingNodeIsNotNamedAfterOtherNodesPods() {
        upload("n1", event("10.0.2.7", "10.0.3.9", null, null));
        assertThat(observed).singleElement().satisfies(e -> {
            assertThat(e.getExplanation().hasSource()).isFalse();
            assertThat(e.getExplanation().hasDestination()).isFalse();
        });
        observed.clear();
        // An address of the reporting node's pod (its agent did not know it yet) is named.
        upload("n1", event("10.0.1.5", "10.0.3.9", null, null));
        assertThat(observed).singleElement().satisfies(e -> {
            assertThat(e.getExplanation().getSource()).isEqualTo(id("x", "mine"));
            assertThat(e.getExplanation().getDestination()).isEqualTo(id("z", "other"));
        });
    }

    @Test
    void aRecorderGetsEveryNamedEventAndMakesAgentsUploadWithoutObservers() {
        VerdictRelay unobserved =
                new VerdictRelay(hub, NodeAuthorizer.allowAll(), new ControlPlaneMetrics(new SimpleMeterRegistry()));
        assertThat(unobserved.demandFor("n1").getWanted()).isFalse();
        List<VerdictEvent> recorded = new ArrayList<>();
        unobserved.recordInto(recorded::add);
        assertThat(unobserved.demandFor("n1").getWanted()).isTrue();
        assertThat(unobserved.demandFor("n1").getHistoryOnly())
                .as("nobody watches n1 live: a second's delay is fine")
                .isTrue();
        unobserved.observe(ObserveVerdictsRequest.newBuilder().setNode("n2").build(), new Fake<>());
        assertThat(unobserved.demandFor("n1").getHistoryOnly()).isTrue();
        assertThat(unobserved.demandFor("n2").getHistoryOnly())
                .as("n2 is watched live")
                .isFalse();
        unobserved
                .upload(new Fake<>())
                .onNext(VerdictUpload.newBuilder()
                        .setNode("n1")
                        .addEvents(event("10.0.1.5", "10.0.2.7", id("x", "mine"), null))
                        .addEvents(event("10.0.2.7", "10.0.3.9", id("y", "theirs"), null)) // a lie: refused
                        .build());
        assertThat(recorded)
                .singleElement()
                .satisfies(e -> assertThat(e.getExplanation().getDestination()).isEqualTo(id("y", "theirs")));
    }

    @Test
    void aStagedObserverGetsOnlyEventsStagedPoliciesWouldChangeAndAsksOnlyForThose() {
        List<VerdictEvent> staged = new ArrayList<>();
        relay.observe(ObserveVerdictsRequest.newBuilder().setStaged(true).build(), new Fake<>() {
            @Override
            public void onNext(ObservedVerdict v) {
                if (v.hasEvent()) {
                    staged.add(v.getEvent());
                }
            }
        });
        assertThat(relay.demandFor("n1").getStaged())
                .as("another observer wants everything")
                .isFalse();
        VerdictEvent plain = event("10.0.1.5", "10.0.2.7", id("x", "mine"), null);
        VerdictEvent flipped = plain.toBuilder()
                .setExplanation(plain.getExplanation().toBuilder()
                        .setStaged(StagedVerdict.newBuilder().setVerdict(Verdict.VERDICT_DENY)))
                .build();
        upload("n1", plain, flipped);
        assertThat(observed).hasSize(2);
        assertThat(staged)
                .singleElement()
                .satisfies(e -> assertThat(e.getExplanation().hasStaged()).isTrue());

        VerdictRelay alone = new VerdictRelay(hub, NodeAuthorizer.allowAll(), new ControlPlaneMetrics(registry));
        alone.observe(ObserveVerdictsRequest.newBuilder().setStaged(true).build(), new Fake<>());
        assertThat(alone.demandFor("n1").getStaged())
                .as("every observer of n1 wants staged only")
                .isTrue();
        assertThat(alone.demandFor("n1").getWanted()).isTrue();
    }

    private static VerdictEvent port(int port) {
        VerdictEvent e = event("10.0.1.5", "10.0.2.7", id("x", "mine"), null);
        return e.toBuilder()
                .setExplanation(e.getExplanation().toBuilder()
                        .setTuple(e.getExplanation().getTuple().toBuilder().setDstPort(port)))
                .build();
    }

    /** What a stream got, as text: ports of events, "end" for the end of the replay. */
    private static class Recording extends Fake<ObservedVerdict> {
        final List<String> got = new ArrayList<>();

        @Override
        public void onNext(ObservedVerdict v) {
            got.add(
                    v.hasHistoryEnd()
                            ? "end:" + v.getHistoryEnd().getReplayed()
                            : v.hasEvent()
                                    ? String.valueOf(v.getEvent()
                                            .getExplanation()
                                            .getTuple()
                                            .getDstPort())
                                    : "lost");
        }
    }

    @Test
    void lastReplaysTheNewestMatchingHeldVerdictsThenFollowsLiveOnes() {
        upload("n1", port(1), port(2), port(3));
        upload("n3", event("10.0.3.9", "10.0.1.5", id("z", "other"), null)); // another node: filtered out
        Recording stream = new Recording();
        relay.observe(
                ObserveVerdictsRequest.newBuilder().setNode("n1").setLast(2).build(), stream);
        upload("n1", port(4));
        assertThat(stream.got).containsExactly("2", "3", "end:2", "4");
        assertThat(registry.get("kubeverdict_verdict_events_held").gauge().value())
                .isEqualTo(5);
    }

    @Test
    void sinceReplaysWhatTheRelayGotWithinTheWindow() {
        long[] now = {1_000_000_000_000L};
        VerdictRelay timed = new VerdictRelay(
                hub, NodeAuthorizer.allowAll(), new ControlPlaneMetrics(new SimpleMeterRegistry()), () -> now[0]);
        timed.observe(ObserveVerdictsRequest.getDefaultInstance(), new Fake<>()); // someone observes: agents send
        StreamObserver<VerdictUpload> in = timed.upload(new Fake<>());
        in.onNext(VerdictUpload.newBuilder().setNode("n1").addEvents(port(1)).build());
        now[0] += 60_000_000_000L;
        in.onNext(VerdictUpload.newBuilder().addEvents(port(2)).build());
        now[0] += 10_000_000_000L;
        Recording stream = new Recording();
        timed.observe(
                ObserveVerdictsRequest.newBuilder()
                        .setSince(com.google.protobuf.Duration.newBuilder().setSeconds(30))
                        .build(),
                stream);
        assertThat(stream.got).containsExactly("2", "end:1");
    }

    @Test
    void liveVerdictsArrivingDuringTheReplayFollowItWithoutGapOrRepeat() {
        upload("n1", port(1));
        Recording stream = new Recording() {
            @Override
            public void onNext(ObservedVerdict v) {
                super.onNext(v);
                if (got.size() == 1) {
                    upload("n1", port(2)); // relayed while the replay is being sent
                }
            }
        };
        relay.observe(ObserveVerdictsRequest.newBuilder().setLast(10).build(), stream);
        assertThat(stream.got).containsExactly("1", "end:1", "2");

        // A live event the replay already held (relayed while the replay was taken) is not sent twice.
        Recording racing = new Recording();
        VerdictObserver o = new VerdictObserver(
                ObserveVerdictsRequest.newBuilder().setLast(5).build(), racing);
        o.offer(7, port(7));
        o.offer(8, port(8));
        o.replay(new RecentVerdicts.Replay(List.of(port(6), port(7)), 7));
        o.offer(7, port(7));
        assertThat(racing.got).containsExactly("6", "7", "end:2", "8");
    }

    @Test
    void aNegativeSinceIsRefused() {
        List<Throwable> errors = new ArrayList<>();
        relay.observe(
                ObserveVerdictsRequest.newBuilder()
                        .setSince(com.google.protobuf.Duration.newBuilder().setSeconds(-5))
                        .build(),
                new Fake<>() {
                    @Override
                    public void onError(Throwable t) {
                        errors.add(t);
                    }
                });
        assertThat(errors).singleElement().asString().contains("INVALID_ARGUMENT");
    }

    /** A stream that is always ready and records nothing. */
    private static class Fake<T> extends ServerCallStreamObserver<T> {
        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public void setOnCancelHandler(Runnable onCancelHandler) {}

        @Override
        public void setCompression(String compression) {}

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setOnReadyHandler(Runnable onReadyHandler) {}

        @Override
        public void request(int count) {}

        @Override
        public void setMessageCompression(boolean enable) {}

        @Override
        public void disableAutoInboundFlowControl() {}

        @Override
        public void onNext(T value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
