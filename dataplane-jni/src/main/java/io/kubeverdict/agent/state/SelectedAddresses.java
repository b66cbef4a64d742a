// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The local pod addresses whose new connections must be queued: those of endpoints that some tier
 * (or would-be tier of staged policies) lists a policy for, in either direction; and, for the pod address guard, the node's pod address
 * ranges with the addresses in them that are known (every endpoint's, and the node's own), whose
 * new connections are queued when their address is not known. Traffic of every other pod never
 * leaves the kernel. Pure calculation over a snapshot.
 */
public record SelectedAddresses(Set<String> ipv4, Set<String> ipv6, Guarded guarded) {

    public static final SelectedAddresses NONE = new SelectedAddresses(Set.of(), Set.of());

    /** The guard's part: ranges (CIDR text) and the known addresses in them; empty when the guard is off. */
    public record Guarded(Set<String> ranges4, Set<String> ranges6, Set<String> known4, Set<String> known6) {
        public static final Guarded NONE = new Guarded(Set.of(), Set.of(), Set.of(), Set.of());

        public Guarded {
            ranges4 = Collections.unmodifiableSet(new TreeSet<>(ranges4));
            ranges6 = Collections.unmodifiableSet(new TreeSet<>(ranges6));
            known4 = Collections.unmodifiableSet(new TreeSet<>(known4));
            known6 = Collections.unmodifiableSet(new TreeSet<>(known6));
        }
    }

    public SelectedAddresses {
        ipv4 = Collections.unmodifiableSet(new TreeSet<>(ipv4));
        ipv6 = Collections.unmodifiableSet(new TreeSet<>(ipv6));
    }

    public SelectedAddresses(Set<String> ipv4, Set<String> ipv6) {
        this(ipv4, ipv6, Guarded.NONE);
    }

    /** With the guard's ranges and known addresses when it is on. */
    public static SelectedAddresses of(NodeSnapshot snapshot, PodGuard guard) {
        SelectedAddresses selected = of(snapshot);
        if (!guard.enabled()) {
            return selected;
        }
        Set<String> known4 = new TreeSet<>();
        Set<String> known6 = new TreeSet<>();
        List<String> known = new ArrayList<>(guard.nodeAddresses());
        for (Endpoint endpoint : snapshot.getEndpointsList()) {
            known.addAll(endpoint.getEndpoint().getIpsList());
        }
        for (String text : known) {
            IpAddress ip = IpAddress.tryParse(text); // canonical text, as the kernel's set prints it
            if (ip != null) {
                (ip.family() == IpAddress.V6 ? known6 : known4).add(ip.toString());
            }
        }
        return new SelectedAddresses(
                selected.ipv4(),
                selected.ipv6(),
                new Guarded(guard.cidrs(IpAddress.V4), guard.cidrs(IpAddress.V6), known4, known6));
    }

    public static SelectedAddresses of(NodeSnapshot snapshot) {
        Set<String> v4 = new TreeSet<>();
        Set<String> v6 = new TreeSet<>();
        for (Endpoint endpoint : snapshot.getEndpointsList()) {
            if (!isSelected(endpoint) && !isStaged(endpoint)) {
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
        return listsAny(endpoint.getEndpoint().getTiersList());
    }

    /**
     * Whether its would-be tiers list a staged policy or a live one: then its connections are
     * queued as well, for the staged decision beside the enforced one (which, for an endpoint no
     * live policy selects, allows; docs/design/staged-policies.md).
     */
    public static boolean isStaged(Endpoint endpoint) {
        return listsAny(endpoint.getEndpoint().getStagedTiersList());
    }

    private static boolean listsAny(List<TierInfo> tiers) {
        for (TierInfo tier : tiers) {
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
