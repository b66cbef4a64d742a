package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.manifests.ManifestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * What a directory's manifest files look like from outside, without reading them: each file's
 * path, size, modification time and identity (inode; links are followed, so a ConfigMap volume's
 * swap of "..data" changes it). Two equal fingerprints taken a moment apart mean nobody wrote in
 * between, as far as the filesystem can tell.
 */
record DirectoryFingerprint(List<Entry> entries) {
    record Entry(String path, long size, long modifiedNanos, Object fileKey) {}

    static DirectoryFingerprint of(Path dir) throws IOException {
        List<Entry> out = new ArrayList<>();
        for (Path f : ManifestFiles.list(dir)) {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
            out.add(new Entry(ManifestFiles.relative(dir, f), a.size(),
                    a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), a.fileKey()));
        }
        return new DirectoryFingerprint(List.copyOf(out));
    }
}
