// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.source.ManifestDirectorySource;
import java.time.Instant;
import java.util.function.Consumer;

/** The manifest source's loads, as readiness and metrics; its watcher's death ends the service. */
final class ManifestHealth implements ManifestDirectorySource.Listener {
    private final ControlPlaneMetrics metrics;
    private final Readiness readiness;
    private final Consumer<Throwable> onDeath;

    ManifestHealth(ControlPlaneMetrics metrics, Readiness readiness, Consumer<Throwable> onDeath) {
        this.metrics = metrics;
        this.readiness = readiness;
        this.onDeath = onDeath;
    }

    @Override
    public void loaded(String revision) {
        metrics.manifestLoadSucceeded(Instant.now().getEpochSecond());
        readiness.sourceLoads();
    }

    @Override
    public void rejected(String error) {
        metrics.manifestLoadFailed();
        readiness.sourceFails(error);
    }

    @Override
    public void died(Throwable cause) {
        onDeath.accept(cause);
    }
}
