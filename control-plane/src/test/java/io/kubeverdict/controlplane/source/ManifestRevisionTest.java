// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestRevisionTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void emptyIsTheHashOfNothing() {
        assertThat(ManifestRevision.of(Map.of()))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    @Test
    void followsTheDocumentedEncoding() throws Exception {
        // "a.yaml" 0x00 len(2) as 8 bytes "x\n"
        var sha = java.security.MessageDigest.getInstance("SHA-256");
        sha.update(b("a.yaml"));
        sha.update((byte) 0);
        sha.update(new byte[] {0, 0, 0, 0, 0, 0, 0, 2});
        sha.update(b("x\n"));
        assertThat(ManifestRevision.of(Map.of("a.yaml", b("x\n"))))
                .isEqualTo(java.util.HexFormat.of().formatHex(sha.digest()))
                .matches("[0-9a-f]{64}");
    }

    @Test
    void insertionOrderDoesNotMatter() {
        Map<String, byte[]> ab = new LinkedHashMap<>();
        ab.put("a.yaml", b("kind: Pod"));
        ab.put("sub/b.yml", b("kind: Namespace"));
        Map<String, byte[]> ba = new LinkedHashMap<>();
        ba.put("sub/b.yml", b("kind: Namespace"));
        ba.put("a.yaml", b("kind: Pod"));
        assertThat(ManifestRevision.of(ab)).isEqualTo(ManifestRevision.of(ba));
    }

    @Test
    void contentPathsAndBoundariesCount() {
        String base = ManifestRevision.of(Map.of("a.yaml", b("x: 1"), "b.yaml", b("y: 2")));
        assertThat(ManifestRevision.of(Map.of("a.yaml", b("x: 1"), "b.yaml", b("y: 3"))))
                .isNotEqualTo(base);
        assertThat(ManifestRevision.of(Map.of("a.yaml", b("x: 1"), "c.yaml", b("y: 2"))))
                .isNotEqualTo(base);
        // Moving bytes from one file to the next changes the revision (lengths are hashed).
        assertThat(ManifestRevision.of(Map.of("a.yaml", b("x: 1y"), "b.yaml", b(": 2"))))
                .isNotEqualTo(base);
        assertThat(ManifestRevision.of(Map.of("a.yaml", b("x: 1")))).isNotEqualTo(base);
    }

    @Test
    void filesTheLoaderDoesNotReadAreIgnored() {
        String base = ManifestRevision.of(Map.of("a.yaml", b("x: 1"), "c.json", b("{}")));
        assertThat(ManifestRevision.of(Map.of(
                        "a.yaml",
                        b("x: 1"),
                        "c.json",
                        b("{}"),
                        "README.md",
                        b("hi"),
                        "a.yaml.swp",
                        b("junk"),
                        "d/e.txt",
                        b("t"),
                        ".a.yaml",
                        b("hidden"),
                        "..data/a.yaml",
                        b("x: 1"))))
                .isEqualTo(base);
    }

    @Test
    void readsADirectoryTheSameWay(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("sub/deeper"));
        Files.writeString(dir.resolve("pods.yaml"), "kind: Pod\n");
        Files.writeString(dir.resolve("sub/deeper/np.yml"), "kind: NetworkPolicy\n");
        Files.writeString(dir.resolve("sub/list.json"), "{}");
        Files.writeString(dir.resolve("notes.txt"), "ignored");
        Files.createDirectories(dir.resolve("dir.yaml")); // a directory is no manifest
        Files.createDirectories(dir.resolve(".hidden"));
        Files.writeString(dir.resolve(".hidden/x.yaml"), "kind: Pod\n"); // nor is anything hidden
        Files.writeString(dir.resolve(".#pods.yaml"), "lock");
        assertThat(ManifestRevision.read(dir))
                .isEqualTo(ManifestRevision.of(Map.of(
                        "pods.yaml", b("kind: Pod\n"),
                        "sub/deeper/np.yml", b("kind: NetworkPolicy\n"),
                        "sub/list.json", b("{}"))));
        Files.writeString(dir.resolve("notes.txt"), "still ignored");
        String before = ManifestRevision.read(dir);
        assertThat(ManifestRevision.read(dir)).isEqualTo(before);
        Files.writeString(dir.resolve("pods.yaml"), "kind: Pod\nmetadata: {}\n");
        assertThat(ManifestRevision.read(dir)).isNotEqualTo(before);
    }
}
