// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.persist.StateFileFormat.Refusal;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.proto.v1.PersistedNodeState;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateFileTest {
    private static final long NOW = 1_800_000_000_000L;
    private static final long DAY = 24 * 3600_000L;

    @TempDir
    Path dir;

    private static PersistedNodeState state(long sequence) throws Exception {
        return PersistedNodeState.newBuilder()
                .setNode("node-1")
                .setSequence(sequence)
                .setWrittenUnixMillis(NOW)
                .setSnapshot(SnapshotFixtures.allowFromB())
                .build();
    }

    @Test
    void whatIsWrittenIsReadBackAndReplacedWhole() throws Exception {
        StateFile file = new StateFile(dir.resolve("not-yet-made"), "node-1");
        assertThat(file.read("node-1", NOW, DAY).refusal()).isEqualTo(Refusal.MISSING);
        file.write(state(1));
        file.write(state(2));
        assertThat(file.read("node-1", NOW, DAY).state().getSequence()).isEqualTo(2);
        assertThat(Files.list(file.path().getParent()).map(p -> p.getFileName().toString()))
                .containsExactly("node-1.state");
    }

    @Test
    void aNodeNameCannotLeaveTheDirectory() {
        assertThat(new StateFile(dir, "../../etc/passwd").path().getParent()).isEqualTo(dir);
    }

    @Test
    void aWriteThatFailsLeavesThePreviousFile() throws Exception {
        StateFile file = new StateFile(dir, "node-1");
        file.write(state(1));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            // root ignores permissions: make the temporary file's name a directory instead
            Files.createDirectories(dir.resolve("node-1.state.tmp").resolve("occupied"));
        } catch (IOException e) {
            // not root: the read-only directory already refuses the write
        }
        try {
            assertThatThrownBy(() -> file.write(state(2))).isInstanceOf(IOException.class);
        } finally {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        assertThat(file.read("node-1", NOW, DAY).state().getSequence()).isEqualTo(1);
    }

    @Test
    void aHugeFileIsRefusedUnread() throws Exception {
        StateFile file = new StateFile(dir, "node-1");
        try (RandomAccessFile sparse = new RandomAccessFile(file.path().toFile(), "rw")) {
            sparse.setLength(StateFile.MAX_BYTES + 1);
        }
        assertThat(file.read("node-1", NOW, DAY).refusal()).isEqualTo(Refusal.TOO_LARGE);
    }

    @Test
    void aDirectoryInPlaceOfTheFileIsUnreadable() throws Exception {
        StateFile file = new StateFile(dir, "node-1");
        Files.createDirectories(file.path());
        assertThat(file.read("node-1", NOW, DAY).refusal()).isEqualTo(Refusal.UNREADABLE);
    }
}
