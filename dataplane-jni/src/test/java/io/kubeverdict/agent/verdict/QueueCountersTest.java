// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueueCountersTest {
    private static final String SAMPLE = "    0  12345     0 2   128     0     0        7  1\n"
            + "  100 4294967295  1024 2 65531    17     3 123456789  1\n"
            + "garbage line\n"
            + "   7      0\n";

    @Test
    void parsesEveryCounterLine() {
        assertThat(QueueCounters.parse(SAMPLE))
                .containsExactly(
                        new QueueCounters(0, 12345, 0, 2, 128, 0, 0, 7),
                        new QueueCounters(100, 4294967295L, 1024, 2, 65531, 17, 3, 123456789));
    }

    @Test
    void emptyTextHasNoQueues() {
        assertThat(QueueCounters.parse("")).isEmpty();
    }

    @Test
    void readsOneQueueFromAFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("nfnetlink_queue");
        Files.writeString(file, SAMPLE);
        assertThat(QueueCounters.read(file, 100))
                .map(QueueCounters::userDropped)
                .contains(3L);
        assertThat(QueueCounters.read(file, 5)).isEmpty();
        assertThat(QueueCounters.read(dir.resolve("missing"), 0)).isEmpty();
    }
}
