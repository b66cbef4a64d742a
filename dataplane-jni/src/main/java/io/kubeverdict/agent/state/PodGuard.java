// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The pod address guard of one generation: the node's pod address ranges (the snapshot's
 * pod_cidrs and the agent's {@code --pod-cidr}) and the node's own addresses, which are never
 * pods. A new connection from or to an address in those ranges that the generation's index does
 * not know as an endpoint is a pod whose state has not reached this node yet (or an address no
 * pod has): judged as "not an endpoint" it would pass unpoliced, so it is held until a generation
 * knows the address, or its time is up. Immutable; {@link #holds} allocates nothing.
 */
public final class PodGuard {
    public static final PodGuard NONE = new PodGuard(List.of(), Set.of());

    private final List<Cidr> cidrs;
    /** Per range: family, startHi, startLo, endHi, endLo. */
    private final long[] ranges;
    /** Per node address: family, hi, lo. */
    private final long[] nodeAddresses;

    private final Set<String> nodeAddressText;

    private PodGuard(List<Cidr> cidrs, Set<IpAddress> nodeAddresses) {
        this.cidrs = List.copyOf(cidrs);
        this.ranges = new long[cidrs.size() * 5];
        for (int i = 0; i < cidrs.size(); i++) {
            Cidr c = cidrs.get(i);
            ranges[i * 5] = c.family();
            ranges[i * 5 + 1] = c.startHi();
            ranges[i * 5 + 2] = c.startLo();
            ranges[i * 5 + 3] = c.endHi();
            ranges[i * 5 + 4] = c.endLo();
        }
        List<IpAddress> inRanges = new ArrayList<>();
        for (IpAddress a : nodeAddresses) {
            if (cidrs.stream().anyMatch(c -> c.contains(a))) {
                inRanges.add(a);
            }
        }
        this.nodeAddresses = new long[inRanges.size() * 3];
        Set<String> text = new TreeSet<>();
        for (int i = 0; i < inRanges.size(); i++) {
            IpAddress a = inRanges.get(i);
            this.nodeAddresses[i * 3] = a.family();
            this.nodeAddresses[i * 3 + 1] = a.hi();
            this.nodeAddresses[i * 3 + 2] = a.lo();
            text.add(a.toString());
        }
        this.nodeAddressText = Set.copyOf(text);
    }

    /**
     * @param cidrs CIDR texts; one that does not parse is an IllegalArgumentException (the agent's
     *     flag) — the snapshot's are checked by its assembler before
     * @param nodeAddresses this node's own addresses: inside the ranges (a bridge's gateway) they
     *     are the node's, never a pod's
     */
    public static PodGuard of(Collection<String> cidrs, Set<IpAddress> nodeAddresses) {
        List<Cidr> parsed = new ArrayList<>();
        for (String text : new TreeSet<>(cidrs)) {
            Cidr c = Cidr.tryParse(text);
            if (c == null) {
                throw new IllegalArgumentException("not a CIDR: " + text);
            }
            parsed.add(c);
        }
        return parsed.isEmpty() ? NONE : new PodGuard(parsed, nodeAddresses);
    }

    public boolean enabled() {
        return ranges.length > 0;
    }

    /** The ranges as canonical CIDR text, IPv4 or IPv6, sorted (for the kernel's guard sets). */
    public Set<String> cidrs(int family) {
        Set<String> out = new TreeSet<>();
        for (Cidr c : cidrs) {
            if (c.family() == family) {
                out.add(c.toString());
            }
        }
        return Collections.unmodifiableSet(out);
    }

    /** The node's own addresses inside the ranges (never held). */
    public Set<String> nodeAddresses() {
        return nodeAddressText;
    }

    /** Whether the packet's source or destination is a pod address of this node that {@code index} does not know. */
    public boolean holds(PacketTuple packet, SnapshotIndex index) {
        if (ranges.length == 0) {
            return false;
        }
        int family = packet.family;
        boolean v4 = family == IpAddress.V4;
        return unknown(family, v4 ? 0 : packet.srcHi, v4 ? packet.srcLo & 0xFFFF_FFFFL : packet.srcLo, index)
                || unknown(family, v4 ? 0 : packet.dstHi, v4 ? packet.dstLo & 0xFFFF_FFFFL : packet.dstLo, index);
    }

    private boolean unknown(int family, long hi, long lo, SnapshotIndex index) {
        return inRanges(family, hi, lo) && !nodeAddress(family, hi, lo) && index.endpointAt(family, hi, lo) < 0;
    }

    private boolean inRanges(int family, long hi, long lo) {
        for (int i = 0; i < ranges.length; i += 5) {
            if (ranges[i] == family
                    && compare(hi, lo, ranges[i + 1], ranges[i + 2]) >= 0
                    && compare(hi, lo, ranges[i + 3], ranges[i + 4]) <= 0) {
                return true;
            }
        }
        return false;
    }

    private boolean nodeAddress(int family, long hi, long lo) {
        for (int i = 0; i < nodeAddresses.length; i += 3) {
            if (nodeAddresses[i] == family && nodeAddresses[i + 1] == hi && nodeAddresses[i + 2] == lo) {
                return true;
            }
        }
        return false;
    }

    private static int compare(long hi, long lo, long otherHi, long otherLo) {
        int c = Long.compareUnsigned(hi, otherHi);
        return c != 0 ? c : Long.compareUnsigned(lo, otherLo);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PodGuard g && g.cidrs.equals(cidrs) && g.nodeAddressText.equals(nodeAddressText);
    }

    @Override
    public int hashCode() {
        return cidrs.hashCode() * 31 + nodeAddressText.hashCode();
    }
}
