// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which live policies staged ones replace in the would-be tiers ({@link Staging#replaces()}), so
 * that an endpoint a replaced policy selects gets would-be tiers even where no staged policy
 * selects it, and is recalculated when a replacement comes or goes.
 */
final class StagedReplacements {
    /** Live key -> the keys of the staged policies replacing it. */
    private final Map<String, Set<String>> replacedBy = new HashMap<>();

    /** Whether some staged policy replaces the live policy of this key. */
    boolean replaced(String liveKey) {
        return replacedBy.containsKey(liveKey);
    }

    /** p came: returns the key of the live policy whose endpoints' would-be tiers changed, or null. */
    String added(PolicyState p) {
        if (!p.staged()) {
            return null;
        }
        replacedBy.computeIfAbsent(p.staging.replaces(), k -> new HashSet<>()).add(p.key);
        return p.staging.replaces();
    }

    /** p went: as {@link #added}. */
    String removed(PolicyState p) {
        if (!p.staged()) {
            return null;
        }
        Set<String> keys = replacedBy.get(p.staging.replaces());
        if (keys != null && keys.remove(p.key) && keys.isEmpty()) {
            replacedBy.remove(p.staging.replaces());
        }
        return p.staging.replaces();
    }
}
