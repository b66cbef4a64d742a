// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.manifests.ManifestProblem;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** Options and loading shared by the offline tools: manifests in, an {@link OfflineCluster} out. */
final class OfflineInput {
    @Option(
            names = "--manifests",
            paramLabel = "DIR",
            description = "Directory of YAML/JSON manifests: Namespaces, Pods, NetworkPolicies, AdminNetworkPolicies, "
                    + "BaselineAdminNetworkPolicies, ClusterNetworkPolicies, Nodes (several documents per file).")
    Path manifests;

    @Option(
            names = "--assign-ips",
            paramLabel = "CIDR",
            description =
                    "Give pods without status.podIPs consecutive addresses from CIDR (namespace/name order) and mark them Running.")
    String assignIps;

    /** What was loaded so far, for a message when memory runs out ("" before the manifests are read). */
    private volatile String loadedSoFar = "";

    @Option(
            names = "--strict",
            description = "Fail (exit 2) on any problem in the manifests (unknown Pod fields, invalid labels, "
                    + "duplicates, unusable policy parts) instead of warning. Skipped kinds (Deployments, Services ...) "
                    + "are no problem.")
    boolean strict;

    /** Whether --manifests was given (else the command asks a running control plane). */
    boolean given() {
        return manifests != null;
    }

    /** Thrown for a fatal input error (exit 2). */
    static final class FatalInput extends Exception {
        FatalInput(String message) {
            super(message);
        }
    }

    /** @param objects what the cluster was calculated from (with the what-if defaults applied) */
    record Loaded(OfflineCluster cluster, List<WhatIfDefaults.Assignment> assignments, ClusterObjects objects) {}

    /**
     * Loads, all or nothing: a file or document that cannot be read is fatal, with every such
     * place (file:line:column and document) on err. Warnings go to err too. Applies the what-if
     * defaults (pods without phase count as Running; without node go to node "what-if").
     */
    Loaded load(PrintWriter err) throws FatalInput {
        if (!Files.isDirectory(manifests)) {
            throw new FatalInput("--manifests " + manifests + ": not a directory");
        }
        LoadedManifests m;
        try {
            m = new ManifestLoader().load(manifests);
        } catch (ManifestLoadException e) {
            for (ManifestProblem p : e.errors()) {
                err.println("error: " + p);
            }
            int more = e.count() - e.errors().size();
            throw new FatalInput("--manifests " + manifests + ": " + e.count() + " error" + (e.count() == 1 ? "" : "s")
                    + (more > 0 ? " (" + more + " not listed)" : "") + "; nothing was evaluated");
        } catch (IOException e) {
            throw new FatalInput("--manifests " + manifests + ": cannot read: " + e);
        }
        loadedSoFar = m.pods().size() + " pods and " + m.policies().size() + " network policies";
        if (!m.skipped().summary().isEmpty()) {
            // Not a problem, not for --strict: what could be a misspelt policy was refused above.
            err.println("note: " + m.skipped().summary());
        }
        for (ManifestProblem p : m.problems()) {
            err.println((strict ? "error: " : "warning: ") + p);
        }
        if (strict && !m.problems().isEmpty()) {
            throw new FatalInput(m.problems().size() + " problem(s) in " + manifests + " (--strict)");
        }
        List<Pod> pods = new ArrayList<>(m.pods());
        List<WhatIfDefaults.Assignment> assigned;
        try {
            assigned = WhatIfDefaults.apply(pods, assignIps, WhatIfDefaults.DEFAULT_NODE);
        } catch (IllegalArgumentException e) {
            throw new FatalInput("--assign-ips: " + e.getMessage());
        }
        ClusterObjects objects = new ClusterObjects(m.namespaces(), pods, m.policies(), m.adminPolicies(), m.nodes());
        OfflineCluster cluster = new OfflineCluster(objects);
        for (Pod p : pods) {
            String key = p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
            boolean hostNetwork =
                    p.getSpec() != null && Boolean.TRUE.equals(p.getSpec().getHostNetwork());
            if (hostNetwork) {
                err.println(cluster.member(key)
                        .map(h -> "note: pod " + key + " is hostNetwork: addressed as node " + h.node() + " ("
                                + String.join(", ", h.ips()) + "), never a subject or pod peer")
                        .orElse("note: hostNetwork pod " + key
                                + " has no address: give it status.podIPs or a Node object"
                                + " with status.addresses"));
            } else if (cluster.endpoint(key).isEmpty()) {
                err.println(
                        "note: pod " + key + " is not an endpoint (needs a node, phase Running, an IP, no hostNetwork)"
                                + (assignIps == null ? "; --assign-ips gives addresses" : ""));
            }
        }
        cluster.domainNameRules()
                .forEach((pod, patterns) -> err.println("note: pod " + pod
                        + " has egress rules to domain names (" + String.join(", ", patterns)
                        + "): what they allow depends on"
                        + " the DNS answers the pod receives at run time; here they match nothing"));
        err.flush();
        return new Loaded(cluster, assigned, objects);
    }

    /** What a message about running out of memory can say about the input. */
    String describeForMemory() {
        return loadedSoFar.isEmpty() ? "the manifests in " + manifests : loadedSoFar;
    }
}
