// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ParserLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;

/** The engine's manifests loader (same rules as `matrix`/`explain`) as a directory source loader. */
public final class EngineDirectoryReader implements DirectoryReader {
    private final ParserLimits limits;
    /**
     * Made by the first load, on the loading thread: building its Jackson mappers is a tenth of a
     * second that a control plane's start spends beside its servers' start, not before it. Loads
     * are one after another (the directory source's first load, then its watcher thread).
     */
    private io.kubeverdict.controlplane.manifests.ManifestLoader loader;

    public EngineDirectoryReader() {
        this(ParserLimits.DEFAULT);
    }

    public EngineDirectoryReader(ParserLimits limits) {
        this.limits = limits;
    }

    @Override
    public Result load(SortedMap<String, byte[]> files) throws ManifestLoadException {
        if (loader == null) {
            loader = new io.kubeverdict.controlplane.manifests.ManifestLoader(limits);
        }
        LoadedManifests m = loader.load(files);
        List<HasMetadata> objects = new ArrayList<>(m.namespaces());
        objects.addAll(m.pods());
        objects.addAll(m.policies());
        objects.addAll(m.nodes());
        objects.addAll(m.adminPolicies());
        return new Result(
                objects,
                m.problems().stream().map(Object::toString).toList(),
                m.skipped().summary());
    }
}
