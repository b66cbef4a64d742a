// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.Map;

/**
 * One String instance per namespace and node name the pods give: the indexes keyed by them (a
 * node's endpoints, a selection's nodes, the changed nodes, a namespace's state) then find them
 * by identity in a string already in cache, and the calculation keeps one copy, not one per pod.
 * Names of nodes and namespaces long gone are dropped with everything else once more are kept
 * than a large cluster has; an instance is only ever an optimisation, never an identity.
 */
final class SharedNames {
    /** More than the nodes and namespaces of the largest clusters together. */
    private static final int MOST = 1 << 17;

    private final Map<String, String> names = new HashMap<>();

    String of(String name) {
        if (name == null) {
            return null;
        }
        String shared = names.putIfAbsent(name, name);
        if (shared != null) {
            return shared;
        }
        if (names.size() > MOST) {
            names.clear();
            names.put(name, name);
        }
        return name;
    }
}
