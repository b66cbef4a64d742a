// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what a manifest directory source reports about its loads. */
final class RecordingListener implements ManifestDirectorySource.Listener {
    final List<String> loaded = new CopyOnWriteArrayList<>();
    final List<String> rejected = new CopyOnWriteArrayList<>();
    final List<Throwable> died = new CopyOnWriteArrayList<>();

    @Override
    public void loaded(String revision) {
        loaded.add(revision);
    }

    @Override
    public void rejected(String error) {
        rejected.add(error);
    }

    @Override
    public void died(Throwable cause) {
        died.add(cause);
    }

    String lastRejected() {
        return rejected.isEmpty() ? null : rejected.get(rejected.size() - 1);
    }
}
