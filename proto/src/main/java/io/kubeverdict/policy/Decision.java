// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The int codes {@link SnapshotIndex#decide} returns. Layout: bit 0 = allowed, bit 1 = the
 * direction the code describes ({@link #EGRESS} or {@link #INGRESS}), bits 2.. = an index:
 * below {@link #FIRST_INDEXED} one of the fixed reasons, then one entry per tier name (that
 * tier's default decided), then one per rule (that rule decided). The entries are the deciding
 * index's own, so a code means something only with the index that returned it; its
 * {@link DecisionText} turns the code into words.
 */
public final class Decision {

    public static final int EGRESS = 0;
    public static final int INGRESS = 1;

    /** Neither address is a local endpoint: nothing to evaluate, allowed. */
    public static final int NO_ENDPOINT = 0;
    /** No tier lists a policy for the endpoint in that direction: allowed. */
    public static final int NOT_ISOLATED = 1;
    /** Every tier with policies passed (PASS) without deciding: allowed. */
    public static final int PASSED_ALL_TIERS = 2;

    static final int FIRST_INDEXED = 3;

    /**
     * Not a code: {@link SnapshotIndex#decideStaged} found nothing staged for the packet's
     * endpoints. Negative, so never an index's code; even, so it reads as "not allowed" to a
     * caller that took it for one (it is never enforced anyway).
     */
    public static final int NOT_STAGED = -2;

    /** Not a code: a direction without a local endpoint, or not evaluated because egress denied. */
    static final int NONE = -1;

    private Decision() {}

    static boolean allowedOrNone(int code) {
        return code == NONE || allowed(code);
    }

    /**
     * A packet's code from its two directions' ({@link #NONE} where not evaluated): a deny decides
     * (egress first); for a packet both allow, the ingress code unless the destination is not
     * isolated and the source's egress was decided by a rule.
     */
    static int combine(int egress, int ingress, boolean localDestination) {
        if (egress != NONE && !allowed(egress)) {
            return egress;
        }
        if (!localDestination) {
            return egress;
        }
        if (!allowed(ingress)) {
            return ingress;
        }
        if (egress != NONE && index(ingress) == NOT_ISOLATED && !isFixedReason(egress)) {
            return egress;
        }
        return ingress;
    }

    /** An enforced and a would-be code in one value ({@link SnapshotIndex#decideWithStaged}): no allocation. */
    static long pair(int enforced, int staged) {
        return (long) staged << 32 | (enforced & 0xFFFF_FFFFL);
    }

    /** A pair of an enforced code and nothing staged. */
    public static long enforcedOnly(int enforced) {
        return pair(enforced, NOT_STAGED);
    }

    public static int enforced(long pair) {
        return (int) pair;
    }

    /** The would-be code of a pair, {@link #NOT_STAGED} when nothing staged concerns the packet. */
    public static int staged(long pair) {
        return (int) (pair >> 32);
    }

    public static boolean allowed(int code) {
        return (code & 1) != 0;
    }

    public static int direction(int code) {
        return (code >>> 1) & 1;
    }

    public static int index(int code) {
        return code >>> 2;
    }

    /** True when the code is one of the fixed reasons rather than a rule or tier default. */
    public static boolean isFixedReason(int code) {
        return index(code) < FIRST_INDEXED;
    }

    static int of(int index, int direction, boolean allowed) {
        return (index << 2) | (direction << 1) | (allowed ? 1 : 0);
    }

    /** The index of "the default of the tier with this name number decided". */
    static int tierDefaultIndex(int tierName) {
        return FIRST_INDEXED + tierName;
    }

    /** The index of "this rule decided", in an index with tierNames tier names. */
    static int ruleIndex(int rule, int tierNames) {
        return FIRST_INDEXED + tierNames + rule;
    }

    /** The tier name number whose default decided, or -1. */
    static int tierNameOf(int code, int tierNames) {
        int t = index(code) - FIRST_INDEXED;
        return t >= 0 && t < tierNames ? t : -1;
    }

    /** The rule that decided, or -1 (a fixed reason or a tier default). */
    static int ruleOf(int code, int tierNames, int rules) {
        int r = index(code) - FIRST_INDEXED - tierNames;
        return r >= 0 && r < rules ? r : -1;
    }

    public static String directionName(int direction) {
        return direction == EGRESS ? "egress" : "ingress";
    }
}
