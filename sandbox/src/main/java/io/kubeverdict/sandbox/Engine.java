// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.manifests.ManifestProblem;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The policy engine in this process, on the manifest copy the control plane watches: the
 * manifest loader, the calculation and the verdict function of `matrix` ({@link OfflineCluster},
 * {@link ConnectivityMatrix}), called directly. The copy has every pod placed, so no what-if
 * defaults apply: the engine sees what the control plane sees.
 */
final class Engine {
    private final Path manifests;
    private final Progress progress;
    private OfflineCluster cluster;
    private Optional<String> aPolicy = Optional.empty();
    private final Map<ServePort, ConnectivityMatrix> expected = new HashMap<>();

    Engine(Path manifests, Progress progress) {
        this.manifests = manifests;
        this.progress = progress;
    }

    /** Reads the copy again (after it was written); the loader's problems are noted with file and document. */
    synchronized void reload() throws IOException {
        reload(manifests);
    }

    /** Reads a staged version of the copy (same file names) before it is published. */
    synchronized void reload(Path dir) throws IOException {
        LoadedManifests loaded;
        try {
            loaded = new ManifestLoader().load(dir);
        } catch (ManifestLoadException e) {
            // The control plane rejects such a copy as a whole too: nothing would be enforced.
            throw new SandboxException("the manifests do not load: " + e.getMessage());
        }
        if (!loaded.skipped().summary().isEmpty()) {
            progress.note(loaded.skipped().summary());
        }
        for (ManifestProblem problem : loaded.problems()) {
            progress.note("warning: " + problem);
        }
        // Everything the control plane reads from the copy, admin-tier policies and Nodes included.
        cluster = new OfflineCluster(new ClusterObjects(
                loaded.namespaces(), loaded.pods(), loaded.policies(), loaded.adminPolicies(), loaded.nodes()));
        aPolicy = loaded.policies().stream()
                .map(p -> "networkpolicy/" + p.getMetadata().getNamespace() + "/"
                        + p.getMetadata().getName())
                .findFirst();
        expected.clear();
    }

    /** A NetworkPolicy of the last read copy as `wait` names one (networkpolicy/NS/NAME), if it has one. */
    synchronized Optional<String> aPolicy() {
        return aPolicy;
    }

    /** The cluster as the last read copy has it: every node's snapshot, as the control plane computes it. */
    synchronized OfflineCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException("the engine has not read the manifests yet");
        }
        return cluster;
    }

    /** Which endpoint may open a new connection to which on target, computed once per copy. */
    synchronized ConnectivityMatrix expected(ServePort target) {
        if (cluster == null) {
            throw new IllegalStateException("the engine has not read the manifests yet");
        }
        return expected.computeIfAbsent(target, t -> ConnectivityMatrix.of(cluster, t.protocol(), t.port()));
    }
}
