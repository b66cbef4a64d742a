// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** When the recorder hands records to its sink: after the bucket's end and the grace, once; a failing sink is contained. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FlowRecorderExportTest {
    private static final long MIN = 60_000;

    /** Records what it gets; throws on the first call when told to. */
    private static final class CollectingSink implements FlowSink {
        final List<FlowHistory.Held> got = new CopyOnWriteArrayList<>();
        final AtomicBoolean throwOnce = new AtomicBoolean();
        final AtomicLong calls = new AtomicLong();
        volatile boolean closed;

        @Override
        public void accept(List<FlowHistory.Held> records) {
            calls.incrementAndGet();
            if (!records.isEmpty() && throwOnce.getAndSet(false)) {
                throw new IllegalStateException("sink broke");
            }
            got.addAll(records);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static VerdictEvent event(long millis) {
        return VerdictEvent.newBuilder()
                .setNode("n2")
                .setTime(Timestamps.fromMillis(millis))
                .setExplanation(Explanation.newBuilder()
                        .setTuple(Tuple.newBuilder()
                                .setSrcIp("10.0.1.12")
                                .setDstIp("10.0.2.11")
                                .setProtocol(6)
                                .setDstPort(80))
                        .setSource(EndpointId.newBuilder().setNamespace("x").setPod("c"))
                        .setDestination(
                                EndpointId.newBuilder().setNamespace("x").setPod("b"))
                        .setEgress(DirectionExplanation.newBuilder()
                                .setEvaluated(true)
                                .setVerdict(Verdict.VERDICT_ALLOW)
                                .setReason("not isolated"))
                        .setIngress(DirectionExplanation.newBuilder()
                                .setEvaluated(true)
                                .setIsolated(true)
                                .setVerdict(Verdict.VERDICT_ALLOW)
                                .setPolicy(
                                        PolicyId.newBuilder().setTier("default").setName("x/allow"))
                                .setRuleId("ingress[0]"))
                        .setVerdict(Verdict.VERDICT_ALLOW))
                .build();
    }

    private static FlowRecorder recorder(AtomicLong clock) {
        return new FlowRecorder(
                new FlowRecorder.Settings(
                        new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 100, 1 << 20),
                        null,
                        Duration.ofMinutes(1)),
                pod -> Optional.of(new PartialVerdicts.Placed(pod.equals("x/c") ? "n1" : "n2", true, Map.of())),
                (node, tuple, egress) -> {
                    throw new AssertionError("both directions were evaluated");
                },
                new SimpleMeterRegistry(),
                clock::get);
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void aBucketIsHandedOutOnlyAfterItsEndAndTheGraceAndTheOpenOnesAtClose() throws Exception {
        AtomicLong clock = new AtomicLong(100 * MIN + 10_000);
        CollectingSink sink = new CollectingSink();
        try (FlowRecorder r = recorder(clock)) {
            r.exportTo(registry -> sink);
            r.record(event(100 * MIN + 1_000));
            clock.set(101 * MIN + FlowRecorder.EXPORT_GRACE.toMillis() - 1); // ended, grace not over
            r.record(event(101 * MIN + 10)); // the next bucket, open
            long sweeps = sink.calls.get();
            waitFor(() -> sink.calls.get() >= sweeps + 2); // two sweeps with this clock: nothing came
            assertThat(sink.got).isEmpty();
            clock.set(101 * MIN + FlowRecorder.EXPORT_GRACE.toMillis());
            waitFor(() -> sink.got.size() == 1);
            assertThat(sink.got.get(0).bucketStart()).isEqualTo(100 * MIN);
        }
        assertThat(sink.got).extracting(FlowHistory.Held::bucketStart).containsExactly(100 * MIN, 101 * MIN);
        assertThat(sink.closed).isTrue();
    }

    @Test
    void aSinkThatThrowsLosesThoseRecordsAndTheRecorderGoesOn() throws Exception {
        AtomicLong clock = new AtomicLong(100 * MIN);
        CollectingSink sink = new CollectingSink();
        sink.throwOnce.set(true);
        try (FlowRecorder r = recorder(clock)) {
            r.exportTo(registry -> sink);
            r.record(event(90 * MIN));
            waitFor(() -> !sink.throwOnce.get());
            r.record(event(91 * MIN));
            waitFor(() -> sink.got.size() == 1);
            assertThat(sink.got.get(0).bucketStart()).isEqualTo(91 * MIN);
            assertThat(r.history().records()).isEqualTo(2);
        }
    }
}
