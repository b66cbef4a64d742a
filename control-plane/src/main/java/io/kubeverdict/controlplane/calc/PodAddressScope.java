// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of a pod's reported addresses its node may give it. A kubelet writes its pods' status
 * (mirror pods included, with any labels), so a compromised node could otherwise put any address,
 * another node's pod's or one outside the cluster, into every IP set that selects its pod. A node
 * whose Node has pod ranges (spec.podCIDRs, written by the node IPAM controller) may give its
 * pods only addresses in them, or its own addresses (status.addresses). A node without ranges,
 * or without a Node object, may give any: there is nothing to check against. Pure.
 */
final class PodAddressScope {
    private PodAddressScope() {}

    /** The addresses the node may give, in their order; all of them when it has no ranges. */
    static List<String> admitted(NodeModel node, List<String> addresses) {
        return split(node, addresses, true);
    }

    /** The addresses the node may not give, in their order; none when it has no ranges. */
    static List<String> refused(NodeModel node, List<String> addresses) {
        return split(node, addresses, false);
    }

    private static List<String> split(NodeModel node, List<String> addresses, boolean admitted) {
        if (node == null || node.podCidrs().isEmpty()) {
            return admitted ? addresses : List.of();
        }
        List<Cidr> ranges = new ArrayList<>(node.podCidrs().size());
        for (String text : node.podCidrs()) {
            ranges.add(Cidr.tryParse(text)); // NodeModel keeps only valid, canonical ranges
        }
        List<String> out = new ArrayList<>(addresses.size());
        for (String address : addresses) {
            if (mayGive(node, ranges, address) == admitted) {
                out.add(address);
            }
        }
        return out.size() == addresses.size() ? addresses : List.copyOf(out);
    }

    private static boolean mayGive(NodeModel node, List<Cidr> ranges, String address) {
        if (node.addresses().contains(address)) {
            return true; // both canonical text
        }
        IpAddress ip = IpAddress.tryParse(address);
        if (ip == null) {
            return false;
        }
        for (Cidr range : ranges) {
            if (range.contains(ip)) {
                return true;
            }
        }
        return false;
    }
}
