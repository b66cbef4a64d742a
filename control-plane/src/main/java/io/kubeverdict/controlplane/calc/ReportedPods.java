// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Pods as reported, and which of their addresses the calculation may use: those their node may
 * give them ({@link PodAddressScope}) and that no other live pod claims too ({@link AddressClaims}).
 * {@link ClusterIndex} applies the pods as {@link #effective} makes them, and judges a node's pods
 * again when its Node changes, so the outcome does not depend on which came first.
 */
final class ReportedPods {
    private final ClusterNodes clusterNodes;
    /** Pods as reported, by "namespace/name". */
    private final Map<String, PodModel> reportedPods = new HashMap<>();

    private final AddressClaims claims = new AddressClaims();
    /** Reported pods by the node they are placed on: their addresses are judged again when its Node changes. */
    private final Map<String, Set<String>> reportedOn = new HashMap<>();
    /** Endpoint pods' addresses their node may not give them ({@link PodAddressScope}), by pod key. */
    private final Map<String, List<RefusedAddress>> refused = new TreeMap<>();

    ReportedPods(ClusterNodes clusterNodes) {
        this.clusterNodes = clusterNodes;
    }

    /** Keeps a pod as reported (its addresses not judged yet: see {@link #judge}). */
    void report(PodModel reported) {
        PodModel before = reportedPods.put(reported.key(), reported);
        String nodeBefore = before == null ? null : before.node();
        if (!java.util.Objects.equals(nodeBefore, reported.node())) {
            unplace(nodeBefore, reported.key());
            if (reported.node() != null) {
                reportedOn
                        .computeIfAbsent(reported.node(), n -> new HashSet<>())
                        .add(reported.key());
            }
        }
    }

    /**
     * Claims the addresses the pod's node may give it (its Node as known now).
     *
     * @return the other pods whose addresses became or stopped being contested by this
     */
    Set<String> judge(String key) {
        PodModel reported = reportedPods.get(key);
        NodeModel node = nodeOf(reported);
        List<String> refusedNow = reported.endpoint() ? PodAddressScope.refused(node, reported.ips()) : List.of();
        if (refusedNow.isEmpty()) {
            refused.remove(key);
        } else {
            refused.put(
                    key,
                    refusedNow.stream()
                            .map(a -> new RefusedAddress(key, reported.node(), a))
                            .toList());
        }
        return claims.claim(key, reported.endpoint() ? PodAddressScope.admitted(node, reported.ips()) : List.of());
    }

    /**
     * The pod as the calculation sees it: without the addresses its node may not give it,
     * and without those another live pod claims too.
     */
    PodModel effective(String key) {
        PodModel reported = reportedPods.get(key);
        return reported.withIps(claims.uncontested(PodAddressScope.admitted(nodeOf(reported), reported.ips())));
    }

    /**
     * Forgets a pod and its claims.
     *
     * @return the other pods whose addresses stopped being contested, or null when the pod was not known
     */
    Set<String> forget(String key) {
        PodModel reported = reportedPods.remove(key);
        if (reported == null) {
            return null;
        }
        unplace(reported.node(), key);
        refused.remove(key);
        return claims.claim(key, List.of());
    }

    /** The reported pods placed on a node (a copy), or null when none is. */
    List<String> placedOn(String node) {
        Set<String> keys = reportedOn.get(node);
        return keys == null ? null : new ArrayList<>(keys);
    }

    /** Addresses more than one live pod claims, with the pods: given to none of them. */
    Map<String, List<String>> addressConflicts() {
        return claims.conflicts();
    }

    /** Endpoint pods' addresses outside their node's pod ranges and not its own: given to nobody. */
    List<RefusedAddress> refusedAddresses() {
        List<RefusedAddress> out = new ArrayList<>();
        refused.values().forEach(out::addAll);
        return out;
    }

    private NodeModel nodeOf(PodModel reported) {
        return reported.node() == null ? null : clusterNodes.get(reported.node());
    }

    private void unplace(String node, String key) {
        Set<String> keys = node == null ? null : reportedOn.get(node);
        if (keys != null) {
            keys.remove(key);
            if (keys.isEmpty()) {
                reportedOn.remove(node);
            }
        }
    }
}
