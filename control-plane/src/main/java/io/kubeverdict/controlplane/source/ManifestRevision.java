// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.manifests.ManifestFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * The revision of a manifest directory: what the control plane reports (ListNodesResponse
 * source_revision) for the load its published snapshots came from, and what a writer of the
 * directory (the sandbox) computes for its own copy to know when that copy is in force.
 *
 * <p>Exactly: lowercase hex SHA-256 over, for each manifest file in ascending order of its
 * relative path ('/'-separated, compared as Java strings): the path in UTF-8, one 0x00 byte, the
 * content length as 8-byte big-endian, the content bytes. Manifest files are those the loader
 * reads ({@link ManifestFiles}: "*.yaml", "*.yml", "*.json" below the directory, none hidden);
 * other files do not count. An empty directory has the SHA-256 of nothing.
 */
public final class ManifestRevision {
    private ManifestRevision() {}

    /** Pure: the revision of files given as relative path -> content (non-manifest paths are skipped). */
    public static String of(Map<String, byte[]> files) {
        MessageDigest sha = sha256();
        new TreeMap<>(files).forEach((path, content) -> {
            if (!ManifestFiles.isManifest(path)) {
                return;
            }
            sha.update(path.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(ByteBuffer.allocate(Long.BYTES).putLong(content.length).array());
            sha.update(content);
        });
        return HexFormat.of().formatHex(sha.digest());
    }

    /** Reads the manifest files below {@code dir} and returns their revision. */
    public static String read(Path dir) throws IOException {
        return of(ManifestFiles.read(dir));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
