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
    /** The placement of the copy last written: the bed's, less the pods that are away. */
    private Placement written;

    private String revision;
    private ManifestSet staged;
    private Placement stagedPlacement;
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
        copy.written = copy.placement;
        copy.pods = placed(source, copy.placement);
        if (copy.pods.isEmpty()) {
            throw new SandboxException("no runnable Pods in " + options.manifests());
        }
        copy.writeFrom(source);
        return copy;
    }

    /**
     * Reads the source again and writes it into the copy. Returns false, writing nothing, when
     * the pods or nodes themselves changed (added, moved, new ports or IPs, other pod ranges): that needs
     * a new sandbox. A pod the sandbox runs may leave the manifests and come back as it was: its
     * namespace stays (as a deleted pod's network lingers until it is torn down), and while it is
     * away the control plane does not know its address ({@link #away()}).
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
        if (!runsAsPlaced(now)
                || !portsOf(pods)
                        .entrySet()
                        .containsAll(portsOf(placed(source, now)).entrySet())) {
            return false;
        }
        source.writeAssigned(now, staging);
        staged = source;
        stagedPlacement = now;
        stagedRevision = ManifestRevision.read(staging);
        return true;
    }

    /**
     * Whether the pods of now are pods of the running bed, each on its node with its addresses,
     * and the nodes, their addresses and pod ranges are the bed's (pods may be away).
     */
    private boolean runsAsPlaced(Placement now) {
        if (!now.nodes().equals(placement.nodes())
                || !now.nodeIps().equals(placement.nodeIps())
                || !now.podRanges().equals(placement.podRanges())) {
            return false;
        }
        for (String pod : now.nodeOf().keySet()) {
            if (!now.nodeOf().get(pod).equals(placement.nodeOf().get(pod))
                    || !now.ipsOf().get(pod).equals(placement.ipsOf().get(pod))
                    || now.hostNetwork().contains(pod)
                            != placement.hostNetwork().contains(pod)) {
                return false;
            }
        }
        return true;
    }

    /** Writes what was staged into the watched copy; its revision is the staged one. */
    void publish() throws IOException {
        if (staged == null) {
            throw new IllegalStateException("nothing staged");
        }
        written = stagedPlacement;
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
        source.writeAssigned(written, dir);
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

    /** Where the bed's pods run, pods that are away included. */
    Placement placement() {
        return placement;
    }

    /** The pods of the bed that the copy last written leaves out, in name order. */
    List<String> away() {
        return pods.stream()
                .map(SandboxPod::name)
                .filter(p -> !written.nodeOf().containsKey(p))
                .toList();
    }

    /** The revision of the copy last written. */
    String revision() {
        return revision;
    }
}
