// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What a pod is part of, from what the control plane has of it (name and labels): the owner's
 * name as the controllers spell their pods' names, and the labels that stay the same across the
 * owner's pods and revisions. Flows are recorded per workload so that a rollout does not turn one
 * flow into many, and recommended policies select workloads by these labels.
 */
public final class Workloads {
    /** Labels that differ per revision or per pod: never part of a workload's identity or a selector. */
    static final Set<String> UNSTABLE_LABELS = Set.of(
            "pod-template-hash",
            "controller-revision-hash",
            "pod-template-generation",
            "statefulset.kubernetes.io/pod-name",
            "apps.kubernetes.io/pod-index",
            "batch.kubernetes.io/controller-uid",
            "controller-uid",
            "batch.kubernetes.io/job-completion-index",
            "job-completion-index");

    /** The random suffix controllers (ReplicaSet, DaemonSet, Job) append: five of [bcdfghjklmnpqrstvwxz2456789]. */
    private static final Pattern RANDOM_SUFFIX = Pattern.compile("-[bcdfghjklmnpqrstvwxz2456789]{5}$");

    private static final Pattern ORDINAL_SUFFIX = Pattern.compile("-\\d+$");

    private Workloads() {}

    /** The labels without the unstable ones, sorted. */
    public static Map<String, String> stableLabels(Map<String, String> labels) {
        TreeMap<String, String> out = new TreeMap<>();
        labels.forEach((k, v) -> {
            if (!UNSTABLE_LABELS.contains(k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /**
     * The owner's name: "web" for a Deployment's pod "web-7d4b9c5f6-x2x9z" (the ReplicaSet's
     * pod-template-hash in the name), "db" for a StatefulSet's "db-0", "agent" for a DaemonSet's
     * "agent-k8x2p"; a pod without such labels is its own workload.
     */
    public static String workloadName(String pod, Map<String, String> labels) {
        String hash = labels.get("pod-template-hash");
        if (hash != null && !hash.isEmpty()) {
            String marker = "-" + hash + "-";
            int at = pod.lastIndexOf(marker);
            if (at > 0) {
                return pod.substring(0, at);
            }
        }
        if (labels.containsKey("statefulset.kubernetes.io/pod-name")
                && ORDINAL_SUFFIX.matcher(pod).find()) {
            return ORDINAL_SUFFIX.matcher(pod).replaceFirst("");
        }
        boolean generated = labels.containsKey("controller-revision-hash")
                || labels.containsKey("batch.kubernetes.io/controller-uid")
                || labels.containsKey("controller-uid");
        if (generated && RANDOM_SUFFIX.matcher(pod).find()) {
            return RANDOM_SUFFIX.matcher(pod).replaceFirst("");
        }
        return pod;
    }
}
