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
import org.junit.jupiter.api.Test;

class CalculationLoopTest {
    @Test
    void aSourceRevisionIsPublishedOnlyAfterTheSnapshotsOfItsChanges() throws Exception {
        SnapshotHub hub = new SnapshotHub();
        // What a subscriber of n1 sees at each wake-up: (revision, endpoints of n1).
        List<String> seen = new CopyOnWriteArrayList<>();
        hub.subscribe("n1", () -> seen.add(hub.sourceRevision() + ":" + hub.current("n1").snapshot().getEndpointsCount()));
        try (CalculationLoop loop = new CalculationLoop(new TestDoubleCalculator(), hub,
                new ControlPlaneMetrics(new SimpleMeterRegistry()), 1, p -> { })) {
            loop.change("pod/upsert", c -> c.upsertPod(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.0.1"), List.of())));
            loop.sourceRevision("manifests", "r1");
            loop.sourceSynced("manifests");
            loop.start();
            loop.firstCalculation().get(30, TimeUnit.SECONDS);
            assertThat(hub.sourceRevision()).isEqualTo("r1");
            assertThat(hub.current("n1").snapshot().getEndpointsCount()).isEqualTo(1);

            seen.clear();
            loop.change("pod/upsert", c -> c.upsertPod(Objects.pod("x", "b", Map.of(), "n1", List.of("10.0.0.2"), List.of())));
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
        try (CalculationLoop loop = new CalculationLoop(new TestDoubleCalculator(), hub,
                new ControlPlaneMetrics(new SimpleMeterRegistry()), 1, p -> { })) {
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
}
