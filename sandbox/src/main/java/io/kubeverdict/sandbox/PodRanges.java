// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Each node's pod address range (Node spec.podCIDRs), as a cluster's node IPAM gives them, so
 * that every agent of a sandbox runs its pod address guard. Pure.
 *
 * <p>A Node object's own podCIDRs are kept. Any other node, the i-th of the sorted node list
 * (from 0), gets subnet i+1 of the sandbox's pod CIDR: a /24 (IPv6 /64, kube-controller-manager's
 * defaults) or smaller when the pod CIDR cannot hold that many; subnet 0 stays free. A range is
 * only given when it fits what the manifests say: every address the manifests give a pod of
 * the node lies in it (the control plane refuses a pod address outside its node's ranges), and
 * no address given to another node's pod, no node's own address and no other node's range does
 * (the node's guard would hold those). A node whose pods' addresses do not fit gets none, with the
 * reason, and its guard stays off. Pods without addresses take them from their node's range
 * ({@link #assignFrom}), those of nodes without one from the first subnet that is no node's.
 *
 * @param of every node's ranges, given or generated (canonical CIDR text); nodes without are absent
 * @param generated the ranges the sandbox writes into the copy (absent: given, or none)
 * @param none why a node has no range
 */
public record PodRanges(Map<String, List<String>> of, Map<String, List<String>> generated, Map<String, String> none) {
    private static final int DEFAULT_NODE_PREFIX4 = 24;
    private static final int DEFAULT_NODE_PREFIX6 = 64;

    public PodRanges {
        of = copy(of);
        generated = copy(generated);
        none = new TreeMap<>(none);
    }

    /**
     * @param podCidr the sandbox's pod CIDR
     * @param nodes every node, sorted
     * @param given the Node objects' podCIDRs (canonical), by node
     * @param podAddresses the addresses the manifests give the pods (not hostNetwork) placed on each node
     * @param nodeAddresses every node's own addresses, the testbed's fabric ones included
     * @throws IllegalArgumentException when podCidr is not a CIDR or cannot hold a subnet per node
     */
    static PodRanges plan(
            String podCidr,
            List<String> nodes,
            Map<String, List<String>> given,
            Map<String, List<String>> podAddresses,
            Collection<String> nodeAddresses) {
        Cidr cluster = cidr(podCidr);
        int prefix = nodePrefix(cluster, nodes.size());
        List<Cidr> givenRanges = new ArrayList<>();
        given.values().forEach(list -> list.forEach(c -> givenRanges.add(cidr(c))));
        Map<String, List<String>> of = new LinkedHashMap<>();
        Map<String, List<String>> generated = new LinkedHashMap<>();
        Map<String, String> none = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            String node = nodes.get(i);
            List<String> own = given.getOrDefault(node, List.of());
            if (!own.isEmpty()) {
                of.put(node, own);
                continue;
            }
            Cidr range = subnet(cluster, prefix, i + 1);
            String misfit = misfit(node, range, givenRanges, podAddresses, nodeAddresses);
            if (misfit == null) {
                of.put(node, List.of(range.toString()));
                generated.put(node, List.of(range.toString()));
            } else {
                none.put(node, "no pod range " + range + ": " + misfit);
            }
        }
        return new PodRanges(of, generated, none);
    }

    /** Why range does not fit node, or null when it does. */
    private static String misfit(
            String node,
            Cidr range,
            List<Cidr> givenRanges,
            Map<String, List<String>> podAddresses,
            Collection<String> nodeAddresses) {
        for (String address : podAddresses.getOrDefault(node, List.of())) {
            if (!range.contains(IpAddress.parse(address))) {
                return "a pod of " + node + " has " + address + ", outside it";
            }
        }
        for (Map.Entry<String, List<String>> e : podAddresses.entrySet()) {
            if (e.getKey().equals(node)) {
                continue;
            }
            for (String address : e.getValue()) {
                if (range.contains(IpAddress.parse(address))) {
                    return "a pod of " + e.getKey() + " has " + address + " in it";
                }
            }
        }
        for (String address : nodeAddresses) {
            if (range.contains(IpAddress.parse(address))) {
                return "the node address " + address + " is in it";
            }
        }
        for (Cidr other : givenRanges) {
            if (other.contains(range) || range.contains(other)) {
                return "it overlaps the Node pod range " + other;
            }
        }
        return null;
    }

    /**
     * Where a node's pods without addresses take theirs: its range of the pod CIDR's family (else
     * its first), or, for a node without ranges, the first subnet of the pod CIDR that overlaps
     * no node's range.
     */
    String assignFrom(String node, String podCidr, int nodeCount) {
        Cidr cluster = cidr(podCidr);
        List<String> own = of.getOrDefault(node, List.of());
        for (String c : own) {
            if (cidr(c).family() == cluster.family()) {
                return c;
            }
        }
        if (!own.isEmpty()) {
            return own.get(0);
        }
        int prefix = nodePrefix(cluster, nodeCount);
        BigInteger count = BigInteger.ONE.shiftLeft(prefix - cluster.prefix());
        for (BigInteger k = BigInteger.ZERO; k.compareTo(count) < 0; k = k.add(BigInteger.ONE)) {
            // Subnet 0, then those after the nodes' (1..N may be free too, but are reserved for them).
            BigInteger index = k.signum() == 0 ? k : k.add(BigInteger.valueOf(nodeCount));
            if (index.compareTo(count) >= 0) {
                break;
            }
            Cidr candidate = subnet(cluster, prefix, index.intValueExact());
            boolean free = of.values().stream()
                    .flatMap(List::stream)
                    .map(PodRanges::cidr)
                    .noneMatch(r -> r.contains(candidate) || candidate.contains(r));
            if (free) {
                return candidate.toString();
            }
        }
        throw new IllegalArgumentException("the pod CIDR " + podCidr + " has no subnet left for the pods of " + node);
    }

    /** The nodes' subnet size: the default one, or smaller so that N+1 subnets fit. */
    private static int nodePrefix(Cidr cluster, int nodes) {
        int bits = cluster.family() == IpAddress.V4 ? 32 : 128;
        int needed = cluster.prefix() + (32 - Integer.numberOfLeadingZeros(nodes)); // 2^k > nodes
        int prefix = Math.max(cluster.family() == IpAddress.V4 ? DEFAULT_NODE_PREFIX4 : DEFAULT_NODE_PREFIX6, needed);
        if (prefix >= bits) {
            throw new IllegalArgumentException(
                    "the pod CIDR " + cluster + " is too small for a pod range per node (" + nodes + " nodes)");
        }
        return prefix;
    }

    /** The index-th subnet of the given prefix length in cluster. */
    private static Cidr subnet(Cidr cluster, int prefix, int index) {
        int bits = cluster.family() == IpAddress.V4 ? 32 : 128;
        BigInteger start =
                toBig(cluster.network()).add(BigInteger.valueOf(index).shiftLeft(bits - prefix));
        byte[] raw = start.toByteArray();
        byte[] address = new byte[bits / 8];
        int copy = Math.min(raw.length, address.length);
        System.arraycopy(raw, raw.length - copy, address, address.length - copy, copy);
        try {
            return cidr(InetAddress.getByAddress(address).getHostAddress() + "/" + prefix);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // a 4- or 16-byte array is always an address
        }
    }

    private static BigInteger toBig(IpAddress a) {
        return BigInteger.valueOf(a.hi() >>> 1)
                .shiftLeft(65)
                .or(BigInteger.valueOf(a.hi() & 1).shiftLeft(64))
                .or(BigInteger.valueOf(a.lo() >>> 1).shiftLeft(1))
                .or(BigInteger.valueOf(a.lo() & 1));
    }

    private static Cidr cidr(String text) {
        Cidr c = Cidr.tryParse(text);
        if (c == null) {
            throw new IllegalArgumentException("not a CIDR: " + text);
        }
        return c;
    }

    private static Map<String, List<String>> copy(Map<String, List<String>> map) {
        Map<String, List<String>> out = new TreeMap<>();
        map.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return out;
    }
}
