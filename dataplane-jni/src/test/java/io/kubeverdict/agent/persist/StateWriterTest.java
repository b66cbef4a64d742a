// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateWriterTest {
    private static final long DAY = 24 * 3600_000L;

    @TempDir
    Path dir;

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void theNewestOfferedStateIsWrittenAndAFailingDiskIsReportedUntilItRecovers() throws Exception {
        NodeSnapshot snapshot = SnapshotFixtures.allowFromB();
        Clock clock = Clock.systemUTC();
        StateFile file = new StateFile(dir, "node-1");
        try (StateWriter writer = new StateWriter(file, "node-1", "test", clock, 1_000_000L).start()) {
            for (long sequence = 1; sequence <= 50; sequence++) {
                writer.offer(snapshot, sequence);
            }
            await(
                    () -> file.read("node-1", clock.millis(), DAY).usable()
                            && file.read("node-1", clock.millis(), DAY).state().getSequence() == 50,
                    "sequence 50 on disk");
            assertThat(writer.failing()).isFalse();

            // The file's place taken by a directory: every write fails, the previous file stays readable.
            Path blocker = dir.resolve("node-1.state.tmp").resolve("occupied");
            // Nothing is offered after sequence 50, but a write may still be finishing (seen once under a CPU hog).
            await(() -> !Files.exists(blocker.getParent()), "no write under way");
            Files.createDirectories(blocker);
            writer.offer(snapshot, 51);
            await(writer::failing, "the failure reported");
            assertThat(writer.failed()).isPositive();
            assertThat(file.read("node-1", clock.millis(), DAY).state().getSequence())
                    .isEqualTo(50);

            // It retries the state it could not write, and says when it works again.
            // Only the blocker goes: the writer's next failed try removes the empty directory itself
            // (removing it here raced that once, under a CPU hog), and the try after it succeeds.
            Files.delete(blocker);
            await(() -> !writer.failing(), "writes working again");
            assertThat(file.read("node-1", clock.millis(), DAY).state().getSequence())
                    .isEqualTo(51);
        }
    }

    @Test
    void closingWritesTheLastOfferedState() throws Exception {
        StateFile file = new StateFile(dir, "node-1");
        StateWriter writer = new StateWriter(file, "node-1", "test", Clock.systemUTC(), 3_600_000_000_000L).start();
        writer.offer(SnapshotFixtures.allowFromB(), 1);
        await(() -> writer.written() == 1, "the first write");
        writer.offer(SnapshotFixtures.allowFromB(), 2); // waits an hour's interval
        writer.close();
        assertThat(file.read("node-1", System.currentTimeMillis(), DAY).state().getSequence())
                .isEqualTo(2);
    }
}
