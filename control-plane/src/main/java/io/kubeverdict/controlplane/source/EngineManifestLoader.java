package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ParserLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;

/** The engine's manifests loader (same rules as `matrix`/`explain`) as a directory source loader. */
public final class EngineManifestLoader implements ManifestLoader {
    private final io.kubeverdict.controlplane.manifests.ManifestLoader loader;

    public EngineManifestLoader() {
        this(ParserLimits.DEFAULT);
    }

    public EngineManifestLoader(ParserLimits limits) {
        this.loader = new io.kubeverdict.controlplane.manifests.ManifestLoader(limits);
    }

    @Override
    public Result load(SortedMap<String, byte[]> files) throws ManifestLoadException {
        LoadedManifests m = loader.load(files);
        List<HasMetadata> objects = new ArrayList<>(m.namespaces());
        objects.addAll(m.pods());
        objects.addAll(m.policies());
        objects.addAll(m.nodes());
        objects.addAll(m.adminPolicies());
        return new Result(objects, m.problems().stream().map(Object::toString).toList());
    }
}
