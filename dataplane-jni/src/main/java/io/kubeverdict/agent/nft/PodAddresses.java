package io.kubeverdict.agent.nft;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
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

    /** Accepts IPv4 and IPv6 literals; anything else is an IllegalArgumentException (no DNS). */
    public static PodAddresses of(Collection<String> ips) {
        TreeSet<String> v4 = new TreeSet<>();
        TreeSet<String> v6 = new TreeSet<>();
        for (String ip : ips) {
            InetAddress address = parseLiteral(ip);
            if (address instanceof Inet4Address) {
                v4.add(address.getHostAddress());
            } else {
                v6.add(canonicalV6((Inet6Address) address));
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

    private static InetAddress parseLiteral(String ip) {
        String s = ip == null ? "" : ip.strip();
        boolean literal = !s.isEmpty() && (s.contains(":") || s.matches("\\d{1,3}(\\.\\d{1,3}){3}")) && !s.contains("%") && !s.contains("/");
        if (!literal) {
            throw new IllegalArgumentException("not an IP address: " + ip);
        }
        try {
            return InetAddress.getByName(s); // a literal: no name lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ip, e);
        }
    }

    /** RFC 5952 text: lower case, longest run of zero groups as "::". */
    private static String canonicalV6(Inet6Address address) {
        byte[] b = address.getAddress();
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8;) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                s.append("::");
                i += bestLength - 1;
                continue;
            }
            if (s.length() > 0 && s.charAt(s.length() - 1) != ':') {
                s.append(':');
            }
            s.append(Integer.toHexString(groups[i]));
        }
        return s.toString();
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
