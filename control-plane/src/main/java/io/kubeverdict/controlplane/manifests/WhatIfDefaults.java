// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fills what hand-written "what-if" manifests usually leave out, so their pods become endpoints:
 * a pod without status.phase counts as Running; a pod without spec.nodeName is placed on
 * {@code defaultNode}; with an address range, a pod without status.podIPs/podIP gets the next
 * free address of the range (in namespace/name order, skipping the network address and addresses
 * other pods already have). Terminal pods (Succeeded, Failed) keep their phase and get no address:
 * they are never endpoints. hostNetwork pods get a node and a phase, never an address: theirs is
 * their node's (never endpoints).
 * For the offline tools only: the service takes pods as the cluster reports them.
 */
public final class WhatIfDefaults {
    public static final String DEFAULT_NODE = "what-if";

    /** One address given to a pod. */
    public record Assignment(String pod, String ip) {}

    private WhatIfDefaults() {}

    /**
     * Mutates the given pods (the loader's own copies), in the loader's sorted order.
     *
     * @param cidr address range for pods without addresses, or null for none
     * @return the addresses given
     * @throws IllegalArgumentException when cidr is not a CIDR or is exhausted
     */
    public static List<Assignment> apply(List<Pod> pods, String cidr, String defaultNode) {
        List<Assignment> assigned = cidr == null ? List.of() : assignAddresses(pods, cidr);
        Map<String, String> ipOf = new HashMap<>();
        assigned.forEach(a -> ipOf.put(a.pod(), a.ip()));
        for (Pod p : pods) {
            if (p.getSpec() == null) {
                p.setSpec(new PodSpec());
            }
            if (p.getStatus() == null) {
                p.setStatus(new PodStatus());
            }
            if (p.getSpec().getNodeName() == null || p.getSpec().getNodeName().isEmpty()) {
                p.getSpec().setNodeName(defaultNode);
            }
            PodStatus st = p.getStatus();
            if (st.getPhase() == null || st.getPhase().isEmpty()) {
                st.setPhase("Running");
            }
            String ip = ipOf.get(key(p));
            if (ip != null) {
                st.setPodIP(ip);
                st.setPodIPs(List.of(new PodIP(ip)));
            }
        }
        return assigned;
    }

    /**
     * The address rule alone, without changing the pods (the sandbox places pods with it too):
     * in the given order, every pod that is not hostNetwork, not terminal and has no status.podIP/podIPs takes
     * the next address of cidr after the network address (up to and including the last) that no
     * pod has.
     *
     * @throws IllegalArgumentException when cidr is not a CIDR or is exhausted
     */
    public static List<Assignment> assignAddresses(List<Pod> pods, String cidr) {
        Cidr range = Cidr.tryParse(cidr);
        if (range == null) {
            throw new IllegalArgumentException("not a CIDR: " + cidr);
        }
        Set<String> used = new HashSet<>();
        for (Pod p : pods) {
            if (p.getStatus() != null) {
                if (p.getStatus().getPodIP() != null) {
                    IpAddress.canonical(p.getStatus().getPodIP()).ifPresent(used::add);
                }
                if (p.getStatus().getPodIPs() != null) {
                    for (PodIP ip : p.getStatus().getPodIPs()) {
                        IpAddress.canonical(ip.getIp()).ifPresent(used::add);
                    }
                }
            }
        }
        List<Assignment> out = new ArrayList<>();
        IpAddress next = range.network();
        for (Pod p : pods) {
            if (p.getSpec() != null && Boolean.TRUE.equals(p.getSpec().getHostNetwork())) {
                continue;
            }
            PodStatus st = p.getStatus();
            if (st != null && !PodModel.live(st.getPhase())) {
                continue;
            }
            boolean hasIp = st != null
                    && ((st.getPodIP() != null && !st.getPodIP().isEmpty())
                            || (st.getPodIPs() != null && !st.getPodIPs().isEmpty()));
            if (hasIp) {
                continue;
            }
            String ip;
            do {
                next = successor(next);
                if (next == null || !range.contains(next)) {
                    throw new IllegalArgumentException("address range " + cidr + " exhausted");
                }
                ip = next.toString();
            } while (used.contains(ip));
            used.add(ip);
            out.add(new Assignment(key(p), ip));
        }
        return out;
    }

    private static String key(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }

    /** The next address of the same family, or null after the last one. */
    private static IpAddress successor(IpAddress a) {
        if (a.family() == IpAddress.V4) {
            return a.lo() == 0xFFFF_FFFFL ? null : IpAddress.v4((int) (a.lo() + 1));
        }
        long lo = a.lo() + 1;
        long hi = lo == 0 ? a.hi() + 1 : a.hi();
        return hi == 0 && lo == 0 ? null : IpAddress.v6(hi, lo);
    }
}
