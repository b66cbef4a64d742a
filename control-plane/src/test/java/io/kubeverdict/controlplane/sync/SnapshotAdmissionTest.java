// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Full snapshots go out a bounded number at a time; the others wait in line, streams open. */
class SnapshotAdmissionTest {
    private SyncServerFixture f;

    @AfterEach
    void tearDown() throws Exception {
        if (f != null) {
            f.close();
        }
    }

    private static final class Recorder implements SnapshotAdmission.Waiter {
        final String name;
        final List<String> log;

        Recorder(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public void admitted() {
            log.add(name);
        }
    }

    @Test
    void permitsPassToTheWaitersInArrivalOrder() {
        SnapshotAdmission admission = new SnapshotAdmission(2);
        List<String> log = new ArrayList<>();
        Recorder a = new Recorder("a", log);
        Recorder b = new Recorder("b", log);
        Recorder c = new Recorder("c", log);
        Recorder d = new Recorder("d", log);
        Recorder e = new Recorder("e", log);
        assertThat(admission.admitOrQueue(a)).isTrue();
        assertThat(admission.admitOrQueue(b)).isTrue();
        assertThat(admission.admitOrQueue(c)).isFalse();
        assertThat(admission.admitOrQueue(d)).isFalse();
        assertThat(admission.admitOrQueue(e)).isFalse();
        assertThat(admission.waiting()).isEqualTo(3);
        assertThat(admission.leave(d)).isTrue(); // d's stream ended while in line
        assertThat(admission.leave(d)).isFalse();
        admission.release();
        admission.release();
        assertThat(log).containsExactly("c", "e");
        assertThat(admission.inUse()).isEqualTo(2);
        assertThat(admission.waiting()).isZero();
        admission.release();
        admission.release();
        assertThat(admission.inUse()).isZero();
        assertThat(admission.admitOrQueue(d)).isTrue();
    }

    /** A snapshot far larger than the fixture's 64 KiB window, so a client that does not read holds its permit. */
    private static NodeSnapshot fat(String node) {
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Endpoint e = podEndpoint("x", "p" + i, "10.0.0." + (i + 1));
            eps.add(e.toBuilder()
                    .setEndpoint(e.getEndpoint().toBuilder().putLabels("fat", "z".repeat(20_000)))
                    .build());
        }
        return snapshot(node, List.of(), List.of(), eps);
    }

    private double gauge(String name) {
        return f.metrics.registry().get(name).gauge().value();
    }

    @Test
    void aStreamWaitsInLineWhileAnotherSendsItsFullSnapshot() throws Exception {
        f = new SyncServerFixture(PolicySyncService.Options.defaults().withMaxConcurrentSnapshots(1));
        NodeSnapshot n1 = fat("n1");
        NodeSnapshot n2 = snapshot("n2", List.of(), List.of(), List.of(podEndpoint("y", "b", "10.0.1.1")));
        f.hub.publish(n1, 0);
        f.hub.publish(n2, 0);
        f.hub.markReady();
        TestAgent slow = TestAgent.connect(f.channel, "n1", false);
        await(() -> gauge("kubeverdict_sync_snapshots_sending") == 1);
        try (TestAgent waiting = f.agent("n2")) {
            await(() -> gauge("kubeverdict_sync_snapshots_waiting") == 1);
            assertThat(waiting.buffered()).as("nothing before its turn").isZero();
            assertThat(f.sync.sessionsOf("n2"))
                    .hasSize(1)
                    .allSatisfy(s -> assertThat(s.isClosed()).isFalse());

            slow.request(Integer.MAX_VALUE);
            slow.readUntilInSync();
            assertThat(slow.state("n1")).isEqualTo(AgentView.canonical(n1));
            waiting.readUntilInSync();
            assertThat(waiting.state("n2")).isEqualTo(AgentView.canonical(n2));
            await(() -> gauge("kubeverdict_sync_snapshots_sending") == 0
                    && gauge("kubeverdict_sync_snapshots_waiting") == 0);

            // Deltas need no permit: a change reaches an in-sync stream at once.
            NodeSnapshot n2b = n2.toBuilder()
                    .addEndpoints(podEndpoint("y", "c", "10.0.1.2"))
                    .build();
            f.hub.publish(n2b, 1);
            waiting.readUntil(n2b);
        } finally {
            slow.close();
        }
    }

    @Test
    void streamsThatEndGiveBackTheirPermitOrTheirPlaceInLine() throws Exception {
        f = new SyncServerFixture(PolicySyncService.Options.defaults().withMaxConcurrentSnapshots(1));
        f.hub.publish(fat("n1"), 0);
        NodeSnapshot n3 = snapshot("n3", List.of(), List.of(), List.of(podEndpoint("y", "d", "10.0.3.1")));
        f.hub.publish(n3, 0);
        f.hub.markReady();
        TestAgent holder = TestAgent.connect(f.channel, "n1", false);
        await(() -> gauge("kubeverdict_sync_snapshots_sending") == 1);
        TestAgent leaver = f.agent("n2");
        await(() -> gauge("kubeverdict_sync_snapshots_waiting") == 1);
        try (TestAgent last = f.agent("n3")) {
            await(() -> gauge("kubeverdict_sync_snapshots_waiting") == 2);
            leaver.close();
            await(() -> gauge("kubeverdict_sync_snapshots_waiting") == 1);
            holder.close(); // cancelled before its InSync: the permit passes to n3
            last.readUntilInSync();
            assertThat(last.state("n3")).isEqualTo(AgentView.canonical(n3));
            await(() -> gauge("kubeverdict_sync_snapshots_sending") == 0
                    && gauge("kubeverdict_sync_snapshots_waiting") == 0);
        }
    }

    static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 30 s");
            }
            Thread.sleep(10);
        }
    }
}
