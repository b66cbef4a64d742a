// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
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
        Files.setLastModifiedTime(
                dir.resolve("a.yaml"),
                FileTime.fromMillis(
                        Files.getLastModifiedTime(dir.resolve("a.yaml")).toMillis() + 1000));
        DirectoryFingerprint second = DirectoryFingerprint.of(dir);
        assertThat(second).isNotEqualTo(first);

        // Renamed over, even with the old size and time: the file's identity tells.
        Files.writeString(dir.resolve(".a.yaml.tmp"), "a: 3\n");
        Files.setLastModifiedTime(dir.resolve(".a.yaml.tmp"), Files.getLastModifiedTime(dir.resolve("a.yaml")));
        Files.move(
                dir.resolve(".a.yaml.tmp"),
                dir.resolve("a.yaml"),
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        assertThat(DirectoryFingerprint.of(dir)).isNotEqualTo(second);

        Files.writeString(dir.resolve("b.yml"), "b: 1\n");
        assertThat(DirectoryFingerprint.of(dir).entries())
                .extracting(DirectoryFingerprint.Entry::path)
                .containsExactly("a.yaml", "b.yml");
    }

    @Test
    void isQuietOnlyWhenNoFileAndNoDirectoryWasWrittenWithinTheInterval(@TempDir Path dir) throws Exception {
        Path sub = Files.createDirectories(dir.resolve("sub"));
        Files.writeString(dir.resolve("a.yaml"), "a: 1\n");
        Files.writeString(sub.resolve("b.yaml"), "b: 1\n");
        Instant now = Instant.now();
        Duration settle = Duration.ofSeconds(5);
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, now))
                .as("just written")
                .isFalse();

        FileTime old = FileTime.from(now.minusSeconds(60));
        for (Path p : new Path[] {dir.resolve("a.yaml"), sub.resolve("b.yaml"), sub, dir}) {
            Files.setLastModifiedTime(p, old);
        }
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, now)).isTrue();
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, Duration.ofSeconds(61), now))
                .isFalse();

        // A file of a copy in progress (its time kept, as cp -p does) shows by its directory's time.
        Files.writeString(sub.resolve("c.yaml"), "c: 1\n");
        Files.setLastModifiedTime(sub.resolve("c.yaml"), old);
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, Instant.now()))
                .as("sub's entry created")
                .isFalse();
        Files.setLastModifiedTime(sub, old);
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, Instant.now()))
                .isTrue();

        Files.delete(dir.resolve("a.yaml"));
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, Instant.now()))
                .as("an entry removed")
                .isFalse();
        Files.setLastModifiedTime(dir, FileTime.from(Instant.now().plusSeconds(3600)));
        assertThat(DirectoryFingerprint.of(dir).quietFor(dir, settle, Instant.now()))
                .as("a future time")
                .isFalse();
    }
}
