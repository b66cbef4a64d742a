package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The engine's manifests loader (same YAML rules as `matrix`/`explain`) as a directory source loader. */
public final class EngineManifestLoader implements ManifestLoader {
    private final io.kubeverdict.controlplane.manifests.ManifestLoader loader =
            new io.kubeverdict.controlplane.manifests.ManifestLoader();

    @Override
    public Result load(Path directory) throws java.io.IOException {
        LoadedManifests m = loader.load(directory);
        List<HasMetadata> objects = new ArrayList<>(m.namespaces());
        objects.addAll(m.pods());
        objects.addAll(m.policies());
        objects.addAll(m.nodes());
        objects.addAll(m.adminPolicies());
        return new Result(objects, m.problems().stream().map(Object::toString).toList());
    }
}
