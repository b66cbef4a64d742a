// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The tier walk of one direction of one endpoint over tiers [tierStart, tierEnd): each tier's first
 * matching rule (from the program's matching rules, or rule by rule without a program), or else
 * its default, decides, unless that action is PASS, which moves on to the next tier. Takes the
 * program's matching rules from the caller so that two walks over tier lists of the same rules
 * (a slot's live and would-be tiers, {@link StagedDecision}) match the packet once. Static and
 * allocation-free, reading the index's fields as {@link RuleWalk} does.
 */
final class TierWalk {

    private TierWalk() {}

    /**
     * @param matched the program's matching rules for this packet ({@link ProgramMatch#matchingRules});
     *     unused without a program
     * @param trace null on the hot path; else each tier's outcome is appended: trace[0] counts the
     *     steps, each step is {@code decisionIndex << 2 | action}
     */
    static int walk(
            SnapshotIndex index,
            int tierStart,
            int tierEnd,
            Program program,
            long matched,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned,
            int[] trace) {
        if (tierStart == tierEnd) {
            return Decision.of(Decision.NOT_ISOLATED, direction, true);
        }
        int remoteMem = AddressEntry.membership(remoteEntry);
        for (int t = tierStart; t < tierEnd; t++) {
            int rule = program != null
                    ? program.firstRule(t - tierStart, matched)
                    : RuleWalk.firstMatchingRule(
                            index, t, endpoint, direction, packet, remoteHi, remoteLo, remoteMem, learned);
            int action = rule >= 0 ? index.ruleAction[rule] : index.tierDefault[t];
            int decided = rule >= 0
                    ? Decision.ruleIndex(rule, index.tierNames)
                    : Decision.tierDefaultIndex(index.tierName[t]);
            if (trace != null) {
                trace[++trace[0]] = decided << 2 | action;
            }
            if (action == SnapshotCompiler.ACTION_PASS) {
                continue;
            }
            return Decision.of(decided, direction, action == SnapshotCompiler.ACTION_ALLOW);
        }
        return Decision.of(Decision.PASSED_ALL_TIERS, direction, true);
    }
}
