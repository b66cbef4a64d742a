// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CalculationLoopTest {
    @Test
    void aSourceRevisionIsPublishedOnlyAfterTheSnapshotsOfItsChanges() throws Exception {
        SnapshotHub hub = new SnapshotHub();
        // What a subscriber of n1 sees at each wake-up: (revision, endpoints of n1).
        List<String> seen = new CopyOnWriteArrayList<>();
        hub.subscribe(
                "n1",
                () -> seen.add(hub.sourceRevision() + ":"
                        + hub.current("n1").snapshot().getEndpointsCount()));
        try (CalculationLoop loop = new CalculationLoop(
                new TestDoubleCalculator(), hub, new ControlPlaneMetrics(new SimpleMeterRegistry()), 1, p -> {})) {
            loop.change(
                    "pod/upsert",
                    c -> c.upsertPod(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.0.1"), List.of())));
            loop.sourceRevision("manifests", "r1");
            loop.sourceSynced("manifests");
            loop.start();
            loop.firstCalculation().get(30, TimeUnit.SECONDS);
            assertThat(hub.sourceRevision()).isEqualTo("r1");
            assertThat(hub.current("n1").snapshot().getEndpointsCount()).isEqualTo(1);

            seen.clear();
            loop.change(
                    "pod/upsert",
                    c -> c.upsertPod(Objects.pod("x", "b", Map.of(), "n1", List.of("10.0.0.2"), List.of())));
            loop.sourceRevision("manifests", "r2");
            loop.query(c -> null).get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            // The hub sets the revision, then wakes its subscribers: wait for the wake-up too.
            while ((!hub.sourceRevision().equals("r2") || seen.size() < 2) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(hub.sourceRevision()).isEqualTo("r2");
            // The snapshot with b came first (still under r1), then the revision that covers it.
            assertThat(seen).containsExactly("r1:2", "r2:2");
        }
    }

    @Test
    void aRevisionWithoutChangesIsStillPublished() throws Exception {
        SnapshotHub hub = new SnapshotHub();
        try (CalculationLoop loop = new CalculationLoop(
                new TestDoubleCalculator(), hub, new ControlPlaneMetrics(new SimpleMeterRegistry()), 1, p -> {})) {
            loop.sourceSynced("manifests");
            loop.start();
            loop.firstCalculation().get(30, TimeUnit.SECONDS);
            assertThat(hub.sourceRevision()).isEmpty();
            loop.sourceRevision("manifests", "same-objects-new-bytes");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (hub.sourceRevision().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(hub.sourceRevision()).isEqualTo("same-objects-new-bytes");
        }
    }

    /** A calculator whose upsert of pod {@code failing} throws the first {@code times} times. */
    private static final class FlakyCalculator extends TestDoubleCalculator {
        private final String failing;
        private final AtomicInteger failuresLeft;

        FlakyCalculator(String failing, int times) {
            this.failing = failing;
            this.failuresLeft = new AtomicInteger(times);
        }

        @Override
        public void upsertPod(io.fabric8.kubernetes.api.model.Pod pod) {
            if (pod.getMetadata().getName().equals(failing) && failuresLeft.getAndDecrement() > 0) {
                throw new IllegalStateException("injected failure for " + failing);
            }
            super.upsertPod(pod);
        }
    }

    private static double counter(SimpleMeterRegistry registry, String name, String kind) {
        var c = registry.find(name).tag("kind", kind).counter();
        return c == null ? 0 : c.count();
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /**
     * Audit M4: an event that throws is retried (and counted), not dropped; the first calculation
     * waits for it. Before, the loop logged "the calculation continues without it" and the pod
     * never reached its node's snapshot.
     */
    @Test
    void aFailedEventIsRetriedAndTheFirstCalculationWaitsForIt() throws Exception {
        SnapshotHub hub = new SnapshotHub();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CalculationLoop loop =
                new CalculationLoop(new FlakyCalculator("a", 2), hub, new ControlPlaneMetrics(registry), 1, p -> {})) {
            loop.change(
                    "pod/upsert",
                    c -> c.upsertPod(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.0.1"), List.of())));
            loop.sourceSynced("kubernetes");
            loop.start();
            loop.firstCalculation().get(30, TimeUnit.SECONDS);
            assertThat(hub.current("n1").snapshot().getEndpointsCount())
                    .as("published with the retried pod")
                    .isEqualTo(1);
            assertThat(counter(registry, "kubeverdict_event_failures_total", "pod/upsert"))
                    .isEqualTo(2);
            assertThat(registry.find("kubeverdict_events_retrying").gauge().value())
                    .isZero();
        }
    }

    /** A newer change of the same object replaces the retry of a failed one (no regression to the old state). */
    @Test
    void aNewerChangeOfTheSameObjectSupersedesAFailedOne() throws Exception {
        SnapshotHub hub = new SnapshotHub();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CalculationLoop loop =
                new CalculationLoop(new FlakyCalculator("a", 1), hub, new ControlPlaneMetrics(registry), 1, p -> {})) {
            loop.sourceSynced("kubernetes");
            loop.start();
            loop.firstCalculation().get(30, TimeUnit.SECONDS);
            loop.change(
                    "pod/upsert",
                    "pod/x/a",
                    c -> c.upsertPod(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.0.1"), List.of())));
            loop.query(c -> null).get(30, TimeUnit.SECONDS);
            assertThat(registry.find("kubeverdict_events_retrying").gauge().value())
                    .isEqualTo(1);
            loop.change(
                    "pod/upsert",
                    "pod/x/a",
                    c -> c.upsertPod(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.0.2"), List.of())));
            loop.query(c -> null).get(30, TimeUnit.SECONDS);
            assertThat(registry.find("kubeverdict_events_retrying").gauge().value())
                    .isZero();
            await(
                    () -> hub.current("n1") != null
                            && hub.current("n1").snapshot().toString().contains("10.0.0.2"),
                    "the newer pod published");
        }
    }
}
