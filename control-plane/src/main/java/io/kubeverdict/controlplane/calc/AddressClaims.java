// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which live pods claim which addresses, and which addresses more than one claims: a terminating
 * pod whose status still shows the address a new pod already has, a node that reports stale or
 * false addresses. A contested address is given to none of its claimants — no endpoint has it and
 * no IP set holds it — so no policy written for one of them applies to the other's traffic: with
 * the pod address guard its new connections are held and then dropped, the most restrictive
 * outcome, until one claim ends. Pure bookkeeping.
 */
final class AddressClaims {
    private final Map<String, Set<String>> claimants = new HashMap<>();
    private final Map<String, List<String>> claimsOf = new HashMap<>();
    /** The addresses more than one pod claims: {@link #conflicts} walks these, not every address. */
    private final Set<String> contested = new HashSet<>();

    /**
     * Sets the addresses a pod claims (none once it is gone or not an endpoint).
     *
     * @return the other pods whose addresses became or stopped being contested by this change
     */
    Set<String> claim(String pod, List<String> addresses) {
        Set<String> affected = new TreeSet<>();
        List<String> before = claimsOf.getOrDefault(pod, List.of());
        for (String address : before) {
            if (!addresses.contains(address)) {
                Set<String> owners = claimants.get(address);
                owners.remove(pod);
                if (owners.size() == 1) {
                    affected.addAll(owners); // the last claimant has it again
                    contested.remove(address);
                }
                if (owners.isEmpty()) {
                    claimants.remove(address);
                }
            }
        }
        for (String address : addresses) {
            if (!before.contains(address)) {
                Set<String> owners = claimants.computeIfAbsent(address, a -> new LinkedHashSet<>());
                if (owners.size() == 1) {
                    affected.addAll(owners); // the first claimant loses it
                }
                owners.add(pod);
                if (owners.size() == 2) {
                    contested.add(address);
                }
            }
        }
        if (addresses.isEmpty()) {
            claimsOf.remove(pod);
        } else {
            claimsOf.put(pod, List.copyOf(addresses));
        }
        affected.remove(pod);
        return affected;
    }

    boolean contested(String address) {
        Set<String> owners = claimants.get(address);
        return owners != null && owners.size() > 1;
    }

    /** The pod's addresses that it alone claims, in its order. */
    List<String> uncontested(List<String> addresses) {
        List<String> out = new ArrayList<>(addresses.size());
        for (String address : addresses) {
            if (!contested(address)) {
                out.add(address);
            }
        }
        return out;
    }

    /**
     * Every contested address with its claimants ("namespace/name"), sorted. Asked after every
     * published burst: it costs the conflicts, not the cluster's addresses.
     */
    Map<String, List<String>> conflicts() {
        Map<String, List<String>> out = new TreeMap<>();
        for (String address : contested) {
            out.put(address, claimants.get(address).stream().sorted().toList());
        }
        return out;
    }
}
