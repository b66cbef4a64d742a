// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Which files of a directory are manifests, the one definition the loader and the directory's
 * revision share: regular files (or links to them) below the directory, recursively, whose name
 * ends in ".yaml", ".yml" or ".json", except hidden ones: no part of the path below the directory
 * may start with ".". That skips editor files and a Kubernetes ConfigMap volume's "..data" and
 * "..2024_..." entries, whose files the volume already shows as top-level links.
 */
public final class ManifestFiles {
    private static final List<String> SUFFIXES = List.of(".yaml", ".yml", ".json");

    private ManifestFiles() {}

    /** Whether a '/'-separated path relative to the directory names a manifest file. */
    public static boolean isManifest(String relativePath) {
        for (String part : relativePath.split("/")) {
            if (part.startsWith(".")) {
                return false;
            }
        }
        return SUFFIXES.stream().anyMatch(relativePath::endsWith);
    }

    /**
     * The manifest files below {@code dir}, sorted by relative path. A {@code dir} that is itself a
     * link is followed (a walk would otherwise see the link and nothing below it).
     */
    public static List<Path> list(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "not a directory");
        }
        if (Files.isSymbolicLink(dir)) {
            List<Path> out = new ArrayList<>();
            Path real = dir.toRealPath();
            for (Path f : list(real)) {
                out.add(dir.resolve(real.relativize(f)));
            }
            return out;
        }
        List<Path> out = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                return d.equals(dir) || !d.getFileName().toString().startsWith(".")
                        ? FileVisitResult.CONTINUE
                        : FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                // attrs describe a link itself; Files.isRegularFile follows it.
                if (isManifest(relative(dir, f)) && Files.isRegularFile(f)) {
                    out.add(f);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        out.sort((a, b) -> relative(dir, a).compareTo(relative(dir, b)));
        return out;
    }

    /** Every manifest file's bytes, keyed by relative path, in path order. */
    public static SortedMap<String, byte[]> read(Path dir) throws IOException {
        SortedMap<String, byte[]> files = new TreeMap<>();
        for (Path f : list(dir)) {
            files.put(relative(dir, f), Files.readAllBytes(f));
        }
        return Collections.unmodifiableSortedMap(files);
    }

    /** The '/'-separated path of {@code file} relative to {@code dir}. */
    public static String relative(Path dir, Path file) {
        return dir.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
    }
}
