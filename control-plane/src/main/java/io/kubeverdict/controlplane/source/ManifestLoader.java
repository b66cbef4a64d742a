package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads a directory of Kubernetes YAML into objects. The engine's manifests loader (package
 * io.kubeverdict.controlplane.manifests) satisfies this through a one-line adapter; the
 * directory source only needs "directory in, objects and problems out".
 */
@FunctionalInterface
public interface ManifestLoader {
    /** What a directory held: the objects, and why some documents could not be used. */
    record Result(List<HasMetadata> objects, List<String> problems) {
        public Result {
            objects = List.copyOf(objects);
            problems = List.copyOf(problems);
        }
    }

    Result load(Path directory) throws IOException;
}
