package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the bit-mask {@link Program} of every (endpoint, direction) slot from the compiled
 * arrays: one program per distinct tier list, so endpoints selected by the same policies share
 * it. A slot stays without a program when it is not isolated or has more rules than one mask
 * holds (the index then walks its rules). Compile time only.
 */
final class Programs {

    final Program[] bySlot;
    /** How many distinct programs exist (for logs and tests). */
    final int distinct;

    Programs(SnapshotCompiler c) {
        bySlot = new Program[c.epTierStart.length];
        Map<List<Integer>, Program> shared = new HashMap<>();
        for (int slot = 0; slot < bySlot.length; slot++) {
            if (c.epTierStart[slot] == c.epTierEnd[slot]) {
                continue;
            }
            List<Integer> key = tierList(c, slot);
            if (!shared.containsKey(key)) {
                shared.put(key, build(c, slot));
            }
            bySlot[slot] = shared.get(key);
        }
        distinct = (int) shared.values().stream().filter(p -> p != null).count();
    }

    /** What a program depends on: the direction and, per tier, name, default and policies. */
    private static List<Integer> tierList(SnapshotCompiler c, int slot) {
        List<Integer> key = new ArrayList<>();
        key.add(slot & 1);
        for (int t = c.epTierStart[slot]; t < c.epTierEnd[slot]; t++) {
            key.add(c.tierName.get(t));
            key.add(c.tierDefault.get(t));
            key.add(c.tierPolEnd.get(t) - c.tierPolStart.get(t));
            for (int k = c.tierPolStart.get(t); k < c.tierPolEnd.get(t); k++) {
                key.add(c.tierPolicies.get(k));
            }
        }
        return key;
    }

    private static Program build(SnapshotCompiler c, int slot) {
        int direction = slot & 1;
        Program.Builder b = new Program.Builder();
        for (int t = c.epTierStart[slot]; t < c.epTierEnd[slot]; t++) {
            b.tier();
            for (int k = c.tierPolStart.get(t); k < c.tierPolEnd.get(t); k++) {
                int policy = c.tierPolicies.get(k);
                if (policy < 0) {
                    continue;
                }
                int pslot = policy * 2 + direction;
                for (int r = c.polRuleStart.get(pslot); r < c.polRuleEnd.get(pslot); r++) {
                    int ps = c.rulePortStart.get(r);
                    int[][] clauses = new int[c.rulePortEnd.get(r) - ps][];
                    for (int q = 0; q < clauses.length; q++) {
                        clauses[q] = new int[] {c.portProto.get(ps + q), c.portLo.get(ps + q), c.portHi.get(ps + q),
                                c.portNamedSet.get(ps + q)};
                    }
                    int ss = c.ruleSetStart.get(r);
                    int[] sets = new int[c.ruleSetEnd.get(r) - ss];
                    for (int i = 0; i < sets.length; i++) {
                        sets[i] = c.ruleSets.get(ss + i);
                    }
                    int ds = c.ruleDomainStart.get(r);
                    int[] domains = new int[c.ruleDomainEnd.get(r) - ds];
                    for (int i = 0; i < domains.length; i++) {
                        domains[i] = c.ruleDomains.get(ds + i);
                    }
                    if (!b.rule(r, c.ruleAllPeers.get(r) != 0, sets, domains, c.ruleV4.get(r), c.ruleV6.get(r), clauses)) {
                        return null; // too many rules for one mask: this slot walks its rules
                    }
                }
            }
        }
        return b.build();
    }
}
