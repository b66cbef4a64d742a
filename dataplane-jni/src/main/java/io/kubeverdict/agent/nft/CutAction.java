// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/**
 * What the node does with the packets of an established connection the policy now denies (the
 * agent marks it {@link FlowMarks#CUT}). New connections a policy denies are always dropped, as
 * conformance requires; this only chooses how existing ones end.
 */
public enum CutAction {
    /** Drop every further packet, both directions: the applications see a silent stall. */
    DROP,
    /** TCP: answer each packet with a reset (nft reject with tcp reset), so the end that sends
     * fails fast; other protocols are dropped. */
    RESET,
    /** Leave established connections alone (the behaviour before existing connections were
     * judged): only first packets are judged. */
    NONE;

    /** The flag's spelling: drop, reset, none. */
    public static CutAction parse(String value) {
        return switch (value) {
            case "drop" -> DROP;
            case "reset" -> RESET;
            case "none" -> NONE;
            default -> throw new IllegalArgumentException("--cut-action must be drop, reset or none, not " + value);
        };
    }

    public String flag() {
        return name().toLowerCase();
    }
}
