package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.kubeverdict.policy.IpAddress;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The part of a Node the calculation uses: its labels (for {@code nodes} peers) and the IP
 * addresses in status.addresses (InternalIP, ExternalIP; host names are not addresses), in
 * canonical text. Comparable by value, so a status heartbeat costs nothing.
 */
public record NodeModel(String name, Map<String, String> labels, List<String> addresses) {

    public static NodeModel of(Node node) {
        Set<String> addresses = new LinkedHashSet<>();
        if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
            for (NodeAddress a : node.getStatus().getAddresses()) {
                if (a != null && a.getAddress() != null) {
                    IpAddress.canonical(a.getAddress()).ifPresent(addresses::add);
                }
            }
        }
        return new NodeModel(node.getMetadata().getName(), Labels.copy(node.getMetadata().getLabels()),
                List.copyOf(addresses));
    }
}
