// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds the bit-mask {@link Program} of every (endpoint, direction) slot from the compiled
 * arrays: one program per distinct tier list, so endpoints selected by the same policies share
 * it. A slot stays without a program when it is not isolated or has more rules than one mask
 * holds (the index then walks its rules). A program depends on the rules alone, so the programs
 * built for one set of rules are kept ({@link #cache}) and reused when only endpoints change.
 */
final class Programs {

    final Program[] bySlot;
    /**
     * The same for the would-be tier ranges of slots whose staged tiers differ from their live ones
     * ({@link EndpointTiers#epStagedStart}); null for every other slot (its staged range is its live one).
     */
    final Program[] stagedBySlot;
    /**
     * Per slot: its staged and live programs number the same rules in the same order (a staged
     * policy that adds no rules, such as a deny-all, or a changed default), so a packet's matching
     * rules are the same for both and are computed once ({@link StagedDecision}).
     */
    final boolean[] stagedSameRules;
    /** How many distinct programs exist (for logs and tests). */
    final int distinct;
    /**
     * Tier list -> program (empty: too many rules) of the tier lists these endpoints have, valid
     * for these rules only (lists no endpoint has any more are dropped, so it does not grow).
     */
    final Map<List<Integer>, Optional<Program>> cache;

    /**
     * @param known programs built before for the same {@code rules} and segments (an empty map after a
     *     rule change); not changed: the result has its own map
     * @param v4Segments the ipBlock segments the index's address entries record (kept by its updates)
     */
    Programs(
            CompiledRules rules,
            EndpointTiers eps,
            Map<List<Integer>, Optional<Program>> known,
            BlockSegments v4Segments,
            BlockSegments v6Segments) {
        cache = new HashMap<>();
        bySlot = new Program[eps.epTierStart.length];
        stagedBySlot = new Program[eps.epTierStart.length];
        stagedSameRules = new boolean[eps.epTierStart.length];
        Map<Program, Boolean> used = new IdentityHashMap<>();
        for (int slot = 0; slot < bySlot.length; slot++) {
            bySlot[slot] = program(
                    rules, eps, slot, eps.epTierStart[slot], eps.epTierEnd[slot], known, used, v4Segments, v6Segments);
            if (eps.slotStaged[slot]) {
                stagedBySlot[slot] = program(
                        rules,
                        eps,
                        slot,
                        eps.epStagedStart[slot],
                        eps.epStagedEnd[slot],
                        known,
                        used,
                        v4Segments,
                        v6Segments);
                stagedSameRules[slot] = bySlot[slot] != null
                        && stagedBySlot[slot] != null
                        && Arrays.equals(bySlot[slot].rules, stagedBySlot[slot].rules);
            }
        }
        distinct = used.size();
    }

    /** The program of tiers [start, end) of a slot, from the cache, {@code known} or built; null: none. */
    private Program program(
            CompiledRules rules,
            EndpointTiers eps,
            int slot,
            int start,
            int end,
            Map<List<Integer>, Optional<Program>> known,
            Map<Program, Boolean> used,
            BlockSegments v4Segments,
            BlockSegments v6Segments) {
        if (start == end) {
            return null;
        }
        List<Integer> key = tierList(eps, slot, start, end);
        Optional<Program> program = cache.get(key);
        if (program == null) {
            program = known.get(key);
        }
        if (program == null) {
            program = Optional.ofNullable(build(rules, eps, slot, start, end, v4Segments, v6Segments));
        }
        cache.put(key, program);
        program.ifPresent(p -> used.put(p, true));
        return program.orElse(null);
    }

    /** What a program depends on: the direction and, per tier, name, default and policies. */
    private static List<Integer> tierList(EndpointTiers eps, int slot, int start, int end) {
        List<Integer> key = new ArrayList<>();
        key.add(slot & 1);
        for (int t = start; t < end; t++) {
            // The tier's name does not change the rules; its number is per index, so it is left out.
            key.add(eps.tierDefault[t]);
            key.add(eps.tierPolEnd[t] - eps.tierPolStart[t]);
            for (int k = eps.tierPolStart[t]; k < eps.tierPolEnd[t]; k++) {
                key.add(eps.tierPolicies[k]);
            }
        }
        return key;
    }

    private static Program build(
            CompiledRules c,
            EndpointTiers eps,
            int slot,
            int start,
            int end,
            BlockSegments v4Segments,
            BlockSegments v6Segments) {
        int direction = slot & 1;
        Program.Builder b = new Program.Builder();
        for (int t = start; t < end; t++) {
            b.tier();
            for (int k = eps.tierPolStart[t]; k < eps.tierPolEnd[t]; k++) {
                int policy = eps.tierPolicies[k];
                if (policy < 0) {
                    continue;
                }
                int pslot = policy * 2 + direction;
                for (int r = c.polRuleStart[pslot]; r < c.polRuleEnd[pslot]; r++) {
                    int ps = c.rulePortStart[r];
                    int[][] clauses = new int[c.rulePortEnd[r] - ps][];
                    for (int q = 0; q < clauses.length; q++) {
                        clauses[q] = new int[] {
                            c.portProto[ps + q], c.portLo[ps + q], c.portHi[ps + q], c.portNamedSet[ps + q]
                        };
                    }
                    int[] sets = Arrays.copyOfRange(c.ruleSets, c.ruleSetStart[r], c.ruleSetEnd[r]);
                    int[] domains = Arrays.copyOfRange(c.ruleDomains, c.ruleDomainStart[r], c.ruleDomainEnd[r]);
                    if (!b.rule(r, c.ruleAllPeers[r], sets, domains, c.ruleV4[r], c.ruleV6[r], clauses)) {
                        return null; // too many rules for one mask: this slot walks its rules
                    }
                }
            }
        }
        return b.build(v4Segments, v6Segments, c.portClasses);
    }
}
