package io.kubeverdict.controlplane.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoryFingerprintTest {
    @Test
    void changesWithEveryKindOfWriteAndOnlyThen(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), "a: 1\n");
        Files.writeString(dir.resolve("notes.txt"), "x");
        DirectoryFingerprint first = DirectoryFingerprint.of(dir);
        assertThat(DirectoryFingerprint.of(dir)).isEqualTo(first);

        Files.writeString(dir.resolve("notes.txt"), "not a manifest: no change");
        Files.writeString(dir.resolve(".a.yaml.tmp"), "hidden: no change");
        assertThat(DirectoryFingerprint.of(dir)).isEqualTo(first);

        // The same size, written again: the modification time tells.
        Files.writeString(dir.resolve("a.yaml"), "a: 2\n");
        Files.setLastModifiedTime(dir.resolve("a.yaml"), FileTime.fromMillis(
                Files.getLastModifiedTime(dir.resolve("a.yaml")).toMillis() + 1000));
        DirectoryFingerprint second = DirectoryFingerprint.of(dir);
        assertThat(second).isNotEqualTo(first);

        // Renamed over, even with the old size and time: the file's identity tells.
        Files.writeString(dir.resolve(".a.yaml.tmp"), "a: 3\n");
        Files.setLastModifiedTime(dir.resolve(".a.yaml.tmp"), Files.getLastModifiedTime(dir.resolve("a.yaml")));
        Files.move(dir.resolve(".a.yaml.tmp"), dir.resolve("a.yaml"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        assertThat(DirectoryFingerprint.of(dir)).isNotEqualTo(second);

        Files.writeString(dir.resolve("b.yml"), "b: 1\n");
        assertThat(DirectoryFingerprint.of(dir).entries()).extracting(DirectoryFingerprint.Entry::path)
                .containsExactly("a.yaml", "b.yml");
    }
}
