// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/**
 * The two conntrack mark bits the agent owns; every other bit of the mark is left alone (rules
 * and updates change only these, under a mask).
 * <ul>
 *   <li>{@link #ADMITTED}: set by our ruleset on a connection's conntrack entry as its first
 *       packet goes to our queue, or is accepted from the verdict cache. A dropped first packet
 *       never confirms its entry, so the mark is seen only on connections the queue let in
 *       (accepted, or passed unchecked: fail-open bypass, queue full); the agent finds them with
 *       a mark filter the kernel applies.</li>
 *   <li>{@link #CUT}: set by the agent when the current policy denies an established connection;
 *       the ruleset then drops (or resets) every further packet of it in either direction, in the
 *       kernel, for as long as the entry lives.</li>
 * </ul>
 * Chosen high so they stay clear of the low bits other software tends to use for ct marks
 * (Istio's 0x539, for instance); change them here only.
 */
public final class FlowMarks {
    public static final int ADMITTED = 0x0800_0000;
    public static final int CUT = 0x0400_0000;
    /** Both bits: a cut clears ADMITTED and sets CUT in one update. */
    public static final int OURS = ADMITTED | CUT;

    private FlowMarks() {}

    /** "0x08000000", as nft prints and parses a mark. */
    static String hex(int mark) {
        return String.format("0x%08x", mark);
    }
}
