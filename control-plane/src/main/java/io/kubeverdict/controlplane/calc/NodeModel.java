// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The part of a Node the calculation uses: its labels (for {@code nodes} peers), the IP
 * addresses in status.addresses (InternalIP, ExternalIP; host names are not addresses), in
 * canonical text, and its pod address ranges (for the agent's pod address guard). Comparable by
 * value, so a status heartbeat costs nothing.
 *
 * @param podCidrs spec.podCIDRs, else spec.podCIDR, as canonical CIDR text without duplicates;
 *     invalid ones are left out ({@link #podCidrProblems} says which)
 */
public record NodeModel(String name, Map<String, String> labels, List<String> addresses, List<String> podCidrs) {

    public static NodeModel of(Node node) {
        Set<String> addresses = new LinkedHashSet<>();
        if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
            for (NodeAddress a : node.getStatus().getAddresses()) {
                if (a != null && a.getAddress() != null) {
                    IpAddress.canonical(a.getAddress()).ifPresent(addresses::add);
                }
            }
        }
        Set<String> podCidrs = new LinkedHashSet<>();
        podCidrTexts(node).forEach((field, text) -> {
            Cidr cidr = Cidr.tryParse(text);
            if (cidr != null) {
                podCidrs.add(cidr.toString());
            }
        });
        return new NodeModel(
                node.getMetadata().getName(),
                Labels.copy(node.getMetadata().getLabels()),
                List.copyOf(addresses),
                List.copyOf(podCidrs));
    }

    /**
     * The pod ranges of a Node that {@link #of} leaves out, each as "field: why" (the API server
     * validates them; a manifest directory may hold anything).
     */
    public static List<String> podCidrProblems(Node node) {
        List<String> out = new ArrayList<>();
        podCidrTexts(node).forEach((field, text) -> {
            if (Cidr.tryParse(text) == null) {
                out.add(field + ": invalid CIDR \"" + text + "\"; ignored");
            }
        });
        return out;
    }

    /** The pod ranges as written, by field: spec.podCIDRs when it lists any, else spec.podCIDR. */
    private static Map<String, String> podCidrTexts(Node node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (node.getSpec() == null) {
            return out;
        }
        List<String> list = node.getSpec().getPodCIDRs();
        if (list != null && !list.isEmpty()) {
            for (int i = 0; i < list.size(); i++) {
                out.put("spec.podCIDRs[" + i + "]", list.get(i));
            }
        } else if (node.getSpec().getPodCIDR() != null
                && !node.getSpec().getPodCIDR().isEmpty()) {
            out.put("spec.podCIDR", node.getSpec().getPodCIDR());
        }
        return out;
    }
}
