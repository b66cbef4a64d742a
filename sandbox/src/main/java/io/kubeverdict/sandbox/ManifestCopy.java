// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.source.ManifestRevision;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The copy of the manifest directory that the control plane watches and the engine reads: the
 * source with every pod the sandbox runs placed ({@link Placement}), and the copy's
 * {@link ManifestRevision}, which the control plane reports once it has published that load.
 *
 * <p>A new version is first <em>staged</em> in a sibling directory, which the engine can read
 * before the control plane can see anything, and then <em>published</em> into the watched
 * directory (each file replaced atomically): a test knows what to expect before the change can
 * take effect.
 */
final class ManifestCopy {
    private final SandboxOptions options;
    private final Path dir;
    private final Path staging;
    private List<SandboxPod> pods;
    private Placement placement;
    private String revision;
    private ManifestSet staged;
    private String stagedRevision;

    private ManifestCopy(SandboxOptions options, Path dir) {
        this.options = options;
        this.dir = dir;
        this.staging = dir.resolveSibling(dir.getFileName() + ".staged");
    }

    /** Reads the source, places its pods and writes the copy into dir. */
    static ManifestCopy write(SandboxOptions options, Path dir) throws IOException {
        ManifestCopy copy = new ManifestCopy(options, dir);
        ManifestSet source = ManifestSet.load(options.manifests());
        copy.placement = copy.place(source);
        copy.pods = placed(source, copy.placement);
        if (copy.pods.isEmpty()) {
            throw new SandboxException("no runnable Pods in " + options.manifests());
        }
        copy.writeFrom(source);
        return copy;
    }

    /**
     * Reads the source again and writes it into the copy. Returns false, writing nothing, when
     * the pods or nodes themselves changed (added, removed, moved, new ports or IPs): that needs a new sandbox.
     */
    boolean refresh() throws IOException {
        if (!stage()) {
            return false;
        }
        publish();
        return true;
    }

    /**
     * Reads the source again and writes it into the staging directory ({@link #stagedDir()}),
     * leaving the watched copy alone. Returns false, staging nothing, when the pods changed.
     */
    boolean stage() throws IOException {
        ManifestSet source = ManifestSet.load(options.manifests());
        Placement now = place(source);
        if (!now.equals(placement) || !portsOf(placed(source, now)).equals(portsOf(pods))) {
            return false;
        }
        source.writeAssigned(placement, staging);
        staged = source;
        stagedRevision = ManifestRevision.read(staging);
        return true;
    }

    /** Writes what was staged into the watched copy; its revision is the staged one. */
    void publish() throws IOException {
        if (staged == null) {
            throw new IllegalStateException("nothing staged");
        }
        writeFrom(staged);
        staged = null;
        if (!revision.equals(stagedRevision)) {
            throw new SandboxException("the published copy " + dir + " differs from the staged one " + staging);
        }
    }

    /** Where {@link #stage()} writes, with the same file names as the copy. */
    Path stagedDir() {
        return staging;
    }

    private void writeFrom(ManifestSet source) throws IOException {
        source.writeAssigned(placement, dir);
        revision = ManifestRevision.read(dir);
    }

    private Placement place(ManifestSet source) {
        try {
            return Placement.of(source.pods(), source.nodes(), options.nodes(), options.podCidr());
        } catch (IllegalArgumentException e) {
            throw new SandboxException("placing the pods (--pod-cidr " + options.podCidr() + "): " + e.getMessage());
        }
    }

    /** The pods the sandbox runs: those placed, hostNetwork ones included. */
    private static List<SandboxPod> placed(ManifestSet source, Placement placement) {
        return source.sandboxPods().stream()
                .filter(p -> placement.nodeOf().containsKey(p.name()))
                .toList();
    }

    private static Map<String, List<ServePort>> portsOf(List<SandboxPod> list) {
        Map<String, List<ServePort>> ports = new LinkedHashMap<>();
        list.forEach(p -> ports.put(p.name(), p.ports()));
        return ports;
    }

    Path dir() {
        return dir;
    }

    /** The pods the sandbox runs, in name order. */
    List<SandboxPod> pods() {
        return pods;
    }

    Placement placement() {
        return placement;
    }

    /** The revision of the copy last written. */
    String revision() {
        return revision;
    }
}
