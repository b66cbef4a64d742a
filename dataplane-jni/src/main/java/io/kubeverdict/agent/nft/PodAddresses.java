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
    public static final PodAddresses EMPTY = new PodAddresses(new TreeSet<>(), new TreeSet<>());

    private final Set<String> v4;
    private final Set<String> v6;

    private PodAddresses(TreeSet<String> v4, TreeSet<String> v6) {
        this.v4 = Collections.unmodifiableSet(v4);
        this.v6 = Collections.unmodifiableSet(v6);
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
        return new PodAddresses(v4, v6);
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
        return o instanceof PodAddresses && ((PodAddresses) o).v4.equals(v4) && ((PodAddresses) o).v6.equals(v6);
    }

    @Override
    public int hashCode() {
        return v4.hashCode() * 31 + v6.hashCode();
    }

    @Override
    public String toString() {
        return "PodAddresses" + v4 + v6;
    }
}
