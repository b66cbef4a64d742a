package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.source.ManifestLoader;
import java.io.IOException;
import java.nio.file.Path;

/** A manifest loader whose loads are counted: problems of the last load, and loads that failed. */
final class MeteredManifestLoader implements ManifestLoader {
    private final ManifestLoader loader;
    private final ControlPlaneMetrics metrics;

    MeteredManifestLoader(ManifestLoader loader, ControlPlaneMetrics metrics) {
        this.loader = loader;
        this.metrics = metrics;
    }

    @Override
    public Result load(Path directory) throws IOException {
        Result result;
        try {
            result = loader.load(directory);
        } catch (IOException | RuntimeException e) {
            metrics.manifestLoadFailed();
            throw e;
        }
        metrics.manifestsLoaded(result.problems().size());
        return result;
    }
}
