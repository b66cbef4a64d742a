// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import io.kubeverdict.policy.IpAddress;
import java.util.Objects;

/**
 * What a conntrack dump asks the kernel for: one address family, entries whose mark has
 * {@code markValue} under {@code markMask} (mask 0: any mark), and optionally only those whose
 * original tuple's source ({@link Match#ORIGINAL_SOURCE}: the connection was opened from
 * {@code address}) or reply tuple's source ({@link Match#REPLY_SOURCE}: it was opened to
 * {@code address}, after any DNAT) is one address. The kernel applies all of it (CTA_FILTER), so
 * entries of other addresses never reach the agent; it still walks its whole table per dump.
 */
public record ConntrackQuery(int family, int markValue, int markMask, Match match, IpAddress address) {

    /** Which tuple's source address must equal {@link #address()}. Ordinals are the shim's KV_CT_MATCH_*. */
    public enum Match {
        ANY,
        ORIGINAL_SOURCE,
        REPLY_SOURCE
    }

    public ConntrackQuery {
        if (family != IpAddress.V4 && family != IpAddress.V6) {
            throw new IllegalArgumentException("family must be 4 or 6, got " + family);
        }
        Objects.requireNonNull(match);
        if ((markValue & ~markMask) != 0) {
            throw new IllegalArgumentException("mark value has bits outside its mask");
        }
        if ((match == Match.ANY) != (address == null)) {
            throw new IllegalArgumentException(
                    "an address goes with ORIGINAL_SOURCE or REPLY_SOURCE, and only with them");
        }
        if (address != null && address.family() != family) {
            throw new IllegalArgumentException(address + " is not of family " + family);
        }
    }

    /** Every entry of a family whose mark has value under mask. */
    public static ConntrackQuery marked(int family, int markValue, int markMask) {
        return new ConntrackQuery(family, markValue, markMask, Match.ANY, null);
    }

    /** Entries of one address, opened from it or to it, whose mark has value under mask. */
    public static ConntrackQuery of(IpAddress address, Match match, int markValue, int markMask) {
        return new ConntrackQuery(address.family(), markValue, markMask, match, address);
    }

    byte[] addressBytes() {
        if (address == null) {
            return null;
        }
        if (family == IpAddress.V4) {
            int v = (int) address.lo();
            return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        }
        byte[] b = new byte[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (address.hi() >>> (56 - 8 * i));
            b[8 + i] = (byte) (address.lo() >>> (56 - 8 * i));
        }
        return b;
    }
}
