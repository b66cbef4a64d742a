package io.kubeverdict.agent.state;

import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * The local pod addresses whose new connections must be queued: those of endpoints that some tier
 * lists a policy for, in either direction. Traffic of every other pod never leaves the kernel.
 * Pure calculation over a snapshot.
 */
public record SelectedAddresses(Set<String> ipv4, Set<String> ipv6) {

    public static final SelectedAddresses NONE = new SelectedAddresses(Set.of(), Set.of());

    public SelectedAddresses {
        ipv4 = Collections.unmodifiableSet(new TreeSet<>(ipv4));
        ipv6 = Collections.unmodifiableSet(new TreeSet<>(ipv6));
    }

    public static SelectedAddresses of(NodeSnapshot snapshot) {
        Set<String> v4 = new TreeSet<>();
        Set<String> v6 = new TreeSet<>();
        for (Endpoint endpoint : snapshot.getEndpointsList()) {
            if (!isSelected(endpoint)) {
                continue;
            }
            for (String ip : endpoint.getEndpoint().getIpsList()) {
                (ip.indexOf(':') >= 0 ? v6 : v4).add(ip);
            }
        }
        return new SelectedAddresses(v4, v6);
    }

    /** Whether any tier lists a policy for the endpoint, ingress or egress. */
    public static boolean isSelected(Endpoint endpoint) {
        for (TierInfo tier : endpoint.getEndpoint().getTiersList()) {
            if (tier.getIngressPoliciesCount() > 0 || tier.getEgressPoliciesCount() > 0) {
                return true;
            }
        }
        return false;
    }

    public int size() {
        return ipv4.size() + ipv6.size();
    }
}
