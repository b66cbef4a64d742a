package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One policy version in {@link ClusterIndex}: the endpoint pods it selects, how many of them per
 * node, and the IP sets it holds a reference on. Mutated by the index only.
 */
final class PolicyState {
    final CompiledPolicy compiled;
    final String key;
    final Set<String> selected = new HashSet<>();
    final Map<String, Integer> nodeCounts = new HashMap<>();
    final List<IpSetState> sets = new ArrayList<>();

    PolicyState(CompiledPolicy compiled) {
        this.compiled = compiled;
        this.key = compiled.key();
    }

    /** The nodes with at least one endpoint this policy selects. */
    Set<String> nodes() {
        return nodeCounts.keySet();
    }
}
