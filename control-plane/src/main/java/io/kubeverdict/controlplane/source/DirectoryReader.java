// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import java.util.List;
import java.util.SortedMap;

/**
 * Reads a directory's manifest files, as the source read them once, into objects. The engine's
 * manifests loader (package io.kubeverdict.controlplane.manifests) satisfies this through a
 * one-line adapter; the directory source only needs "files in, objects and warnings out, or the
 * whole load rejected".
 */
@FunctionalInterface
public interface DirectoryReader {
    /**
     * What a directory held: the objects, warnings about what was used otherwise than written, and
     * a one-line summary of the objects skipped as kinds not read ("" when none was).
     */
    record Result(List<HasMetadata> objects, List<String> problems, String skipped) {
        public Result(List<HasMetadata> objects, List<String> problems) {
            this(objects, problems, "");
        }

        public Result {
            objects = List.copyOf(objects);
            problems = List.copyOf(problems);
        }
    }

    /**
     * @param files relative path -> content, in path order
     * @throws ManifestLoadException when any file or document cannot be read: nothing of it is used
     */
    Result load(SortedMap<String, byte[]> files) throws ManifestLoadException;
}
