// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The namespaces {@link ClusterIndex} knows of, by name: declared ones and those only a pod,
 * policy or IP set refers to. A namespace's state is made on first reference and forgotten once
 * nothing refers to it.
 */
final class Namespaces {
    private final Map<String, NamespaceState> byName = new HashMap<>();
    /** Joins a new namespace to what already covers it (namespace-selector sets, admin-tier policies). */
    private final Consumer<NamespaceState> coverNew;

    Namespaces(Consumer<NamespaceState> coverNew) {
        this.coverNew = coverNew;
    }

    /** A namespace's state, or null when nothing refers to it. */
    NamespaceState get(String name) {
        return byName.get(name);
    }

    /** A namespace's state, made (and covered) when it has none. */
    NamespaceState getOrCreate(String name) {
        NamespaceState st = byName.get(name);
        if (st == null) {
            st = new NamespaceState(name);
            byName.put(name, st);
            coverNew.accept(st);
        }
        return st;
    }

    Collection<NamespaceState> all() {
        return byName.values();
    }

    void dropIfUnused(NamespaceState st) {
        if (st.unused()) {
            byName.remove(st.name);
        }
    }
}
