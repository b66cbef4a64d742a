// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The value of an address in the index's address tables, one long: bits 0-31 the address's IP-set
 * membership ({@link Membership}), bits 32-47 its local endpoint plus one (0: not local), bits
 * 48-62 the ipBlock segment it lies in ({@link BlockSegments}; {@link #NO_SEGMENT}: not numbered).
 * Bit 63 stays clear: a negative value is {@link AddressTable#ABSENT}. The named-port tables hold a
 * membership alone.
 */
final class AddressEntry {

    /** The most local endpoints an index numbers (a node runs a few hundred pods at most). */
    static final int MAX_ENDPOINTS = 0xFFFE;
    /** No segment recorded: programs search their ranges. Also what an absent entry reads as. */
    static final int NO_SEGMENT = 0x7FFF;

    private AddressEntry() {}

    static long of(int endpoint, int segment, int membership) {
        if (endpoint >= MAX_ENDPOINTS) {
            throw new IllegalArgumentException("more than " + MAX_ENDPOINTS + " local endpoints on one node");
        }
        return (long) segment << 48 | (long) (endpoint + 1) << 32 | (membership & 0xFFFF_FFFFL);
    }

    /** The local endpoint, or -1 (also for an absent entry). */
    static int endpoint(long entry) {
        return entry < 0 ? -1 : (int) (entry >>> 32 & 0xFFFF) - 1;
    }

    /** The segment; an absent entry reads as one past every segment array (see {@link Program#blocksHolding}). */
    static int segment(long entry) {
        return (int) (entry >>> 48);
    }

    /** The membership; {@link Membership#EMPTY} for an absent entry. */
    static int membership(long entry) {
        return entry < 0 ? Membership.EMPTY : (int) entry;
    }
}
