// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DomainNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The domain-name sets (learned_set_id) a snapshot names, numbered in the order first met: rules'
 * peers first, then endpoints' watches. Compile time only; a copy lets the endpoint phase append
 * to what the rule phase numbered without changing it.
 */
final class DomainSets {

    private final Map<String, Integer> index = new HashMap<>();
    final List<String> ids = new ArrayList<>();
    final List<List<String>> patterns = new ArrayList<>();

    DomainSets copy() {
        DomainSets c = new DomainSets();
        c.index.putAll(index);
        c.ids.addAll(ids);
        c.patterns.addAll(patterns);
        return c;
    }

    /** Why a domain-name peer cannot be used ("domain-name peer without patterns"), or null when it can. */
    static String unusable(DomainNames names) {
        if (names.getLearnedSetId().isEmpty() || names.getPatternsCount() == 0) {
            return "domain-name peer without " + (names.getLearnedSetId().isEmpty() ? "learned set id" : "patterns");
        }
        return null;
    }

    /** The number of a domain set (the first pattern list given for an id is kept); -1 when unusable. */
    int number(String where, DomainNames names, ProblemList problems) {
        String unusable = unusable(names);
        if (unusable != null) {
            problems.add(where + ": " + unusable + "; it matches nothing");
            return -1;
        }
        String id = names.getLearnedSetId();
        Integer known = index.get(id);
        if (known != null) {
            if (!patterns.get(known).equals(names.getPatternsList())) {
                problems.add(where + ": domain set " + id + " appears with other patterns; the first are used");
            }
            return known;
        }
        int n = ids.size();
        index.put(id, n);
        ids.add(id);
        patterns.add(List.copyOf(names.getPatternsList()));
        return n;
    }
}
