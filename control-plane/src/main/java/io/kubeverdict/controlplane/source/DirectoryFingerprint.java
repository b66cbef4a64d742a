// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.manifests.ManifestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

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
            out.add(new Entry(
                    ManifestFiles.relative(dir, f),
                    a.size(),
                    a.lastModifiedTime().to(TimeUnit.NANOSECONDS),
                    a.fileKey()));
        }
        return new DirectoryFingerprint(List.copyOf(out));
    }

    /**
     * Whether nothing was written in {@code dir} (whose fingerprint this is) within {@code interval}
     * before {@code now}, as modification times tell: no manifest file's and no directory's (a
     * directory's changes when an entry is created, removed or renamed in it, so a copy of several
     * files shows while it runs). A time in the future counts as now.
     */
    boolean quietFor(Path dir, Duration interval, Instant now) throws IOException {
        long newest = Files.getLastModifiedTime(dir).to(TimeUnit.NANOSECONDS);
        Set<Path> directories = new HashSet<>();
        for (Entry e : entries) {
            newest = Math.max(newest, e.modifiedNanos());
            for (Path d = dir.resolve(e.path()).getParent();
                    d != null && !d.equals(dir) && directories.add(d);
                    d = d.getParent()) {
                newest = Math.max(newest, Files.getLastModifiedTime(d).to(TimeUnit.NANOSECONDS));
            }
        }
        long nowNanos = TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
        return nowNanos - newest >= interval.toNanos();
    }
}
