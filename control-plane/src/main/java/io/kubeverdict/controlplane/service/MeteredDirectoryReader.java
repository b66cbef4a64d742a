// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.source.DirectoryReader;
import java.util.SortedMap;

/**
 * A manifest loader whose applied loads report their problem count; rejected loads are counted by
 * the source's listener (kubeverdict_manifest_load_errors_total).
 */
final class MeteredDirectoryReader implements DirectoryReader {
    private final DirectoryReader loader;
    private final ControlPlaneMetrics metrics;

    MeteredDirectoryReader(DirectoryReader loader, ControlPlaneMetrics metrics) {
        this.loader = loader;
        this.metrics = metrics;
    }

    @Override
    public Result load(SortedMap<String, byte[]> files) throws ManifestLoadException {
        Result result = loader.load(files);
        metrics.manifestsLoaded(result.problems().size());
        return result;
    }
}
