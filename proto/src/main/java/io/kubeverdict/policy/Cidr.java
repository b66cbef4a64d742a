// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * An address block "address/prefix"; host bits of the address are cleared, as Kubernetes (Go's
 * ParseCIDR) does, so "10.0.0.1/24" means 10.0.0.0/24. The one CIDR parser of the project.
 */
public record Cidr(int family, long startHi, long startLo, long endHi, long endLo, int prefix) {

    /** Parses "10.0.0.0/8" or "fd00::/64"; returns null when malformed. */
    public static Cidr tryParse(String text) {
        if (text == null) {
            return null;
        }
        int slash = text.indexOf('/');
        if (slash < 0 || slash == text.length() - 1) {
            return null;
        }
        IpAddress base = IpAddress.tryParse(text.substring(0, slash));
        if (base == null) {
            return null;
        }
        String p = text.substring(slash + 1);
        if (p.length() > 3
                || !p.chars().allMatch(c -> c >= '0' && c <= '9')
                || (p.length() > 1 && p.charAt(0) == '0')) {
            return null;
        }
        int prefix = Integer.parseInt(p);
        if (base.family() == IpAddress.V4) {
            if (prefix > 32) {
                return null;
            }
            long hostMask = prefix == 0 ? 0xFFFF_FFFFL : (1L << (32 - prefix)) - 1;
            long start = base.lo() & ~hostMask;
            return new Cidr(IpAddress.V4, 0, start, 0, start | hostMask, prefix);
        }
        if (prefix > 128) {
            return null;
        }
        long hiHost = prefix >= 64 ? 0 : (prefix == 0 ? -1L : -1L >>> prefix);
        long loHost = prefix >= 64 ? (prefix == 128 ? 0 : -1L >>> (prefix - 64)) : -1L;
        long sHi = base.hi() & ~hiHost;
        long sLo = base.lo() & ~loHost;
        return new Cidr(IpAddress.V6, sHi, sLo, sHi | hiHost, sLo | loHost, prefix);
    }

    /** The first address of the block (its network address). */
    public IpAddress network() {
        return new IpAddress(family, startHi, startLo);
    }

    public boolean contains(IpAddress a) {
        return a.family() == family
                && compareUnsigned(startHi, startLo, a.hi(), a.lo()) <= 0
                && compareUnsigned(a.hi(), a.lo(), endHi, endLo) <= 0;
    }

    /** Whether every address of other is inside this block. */
    public boolean contains(Cidr other) {
        return other.family == family
                && compareUnsigned(startHi, startLo, other.startHi, other.startLo) <= 0
                && compareUnsigned(other.endHi, other.endLo, endHi, endLo) <= 0;
    }

    private static int compareUnsigned(long aHi, long aLo, long bHi, long bLo) {
        int hi = Long.compareUnsigned(aHi, bHi);
        return hi != 0 ? hi : Long.compareUnsigned(aLo, bLo);
    }

    /** The canonical text: canonical network address, "/", prefix ("10.0.0.0/8", "fd00::/64"). */
    @Override
    public String toString() {
        return network() + "/" + prefix;
    }
}
