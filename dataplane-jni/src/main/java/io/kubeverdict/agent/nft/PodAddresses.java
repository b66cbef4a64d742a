// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.policy.IpAddress;
import java.util.Collection;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * The IPs of the policy-selected local pods, split by family and kept in canonical text form
 * (so "fd00:0::1" and "fd00::1" are one element). Immutable value.
 */
public final class PodAddresses {
    public static final PodAddresses EMPTY = new PodAddresses(new TreeSet<>(), new TreeSet<>(), Guard.NONE);

    /**
     * The pod address guard's sets: the node's pod ranges (CIDR text) and the addresses in them that
     * are known (endpoints, the node's own). New connections from or to an address in the ranges
     * that is not known are queued too.
     */
    public record Guard(Set<String> ranges4, Set<String> ranges6, Set<String> known4, Set<String> known6) {
        public static final Guard NONE = new Guard(Set.of(), Set.of(), Set.of(), Set.of());

        public Guard {
            ranges4 = Collections.unmodifiableSet(new TreeSet<>(ranges4));
            ranges6 = Collections.unmodifiableSet(new TreeSet<>(ranges6));
            known4 = Collections.unmodifiableSet(new TreeSet<>(known4));
            known6 = Collections.unmodifiableSet(new TreeSet<>(known6));
        }
    }

    private final Set<String> v4;
    private final Set<String> v6;
    private final Guard guard;

    private PodAddresses(TreeSet<String> v4, TreeSet<String> v6, Guard guard) {
        this.v4 = Collections.unmodifiableSet(v4);
        this.v6 = Collections.unmodifiableSet(v6);
        this.guard = guard;
    }

    /** The same selected addresses with this guard. */
    public PodAddresses withGuard(Guard guard) {
        return new PodAddresses(new TreeSet<>(v4), new TreeSet<>(v6), guard);
    }

    public Guard guard() {
        return guard;
    }

    /**
     * Accepts IPv4 and IPv6 literals, parsed like the verdict function parses them; anything else
     * is an IllegalArgumentException (no DNS). An IPv4-mapped IPv6 address is the IPv4 address
     * (it is what the kernel's IPv4 hooks see).
     */
    public static PodAddresses of(Collection<String> ips) {
        TreeSet<String> v4 = new TreeSet<>();
        TreeSet<String> v6 = new TreeSet<>();
        for (String ip : ips) {
            IpAddress address = IpAddress.tryParse(ip == null ? null : ip.strip());
            if (address == null) {
                throw new IllegalArgumentException("not an IP address: " + ip);
            }
            if (address.family() == IpAddress.V4) {
                v4.add(address.toString());
            } else if (address.hi() == 0 && (address.lo() >>> 32) == 0xFFFFL) {
                v4.add(IpAddress.v4((int) address.lo()).toString());
            } else {
                v6.add(address.toString());
            }
        }
        return new PodAddresses(v4, v6, Guard.NONE);
    }

    public Set<String> v4() {
        return v4;
    }

    public Set<String> v6() {
        return v6;
    }

    public boolean isEmpty() {
        return v4.isEmpty() && v6.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PodAddresses p && p.v4.equals(v4) && p.v6.equals(v6) && p.guard.equals(guard);
    }

    @Override
    public int hashCode() {
        return (v4.hashCode() * 31 + v6.hashCode()) * 31 + guard.hashCode();
    }

    @Override
    public String toString() {
        return "PodAddresses" + v4 + v6 + (guard.equals(Guard.NONE) ? "" : " " + guard);
    }
}
