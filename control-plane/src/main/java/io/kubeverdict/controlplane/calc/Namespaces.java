// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The namespaces {@link ClusterIndex} knows of, by name: declared ones and those only a pod,
 * policy or IP set refers to. A namespace's state is made on first reference and forgotten once
 * nothing refers to it. Its labels and pods change only here, so that {@link #revision()} counts
 * every change of which endpoints a scope covers ({@link ScopePods} keeps what it found while the
 * count stands).
 */
final class Namespaces {
    private final Map<String, NamespaceState> byName = new HashMap<>();
    /** Counts namespaces made and dropped, relabelled, and their pods changed. */
    private long revision;
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
            revision++;
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
            revision++;
        }
    }

    /** The namespace's labels are now these. */
    void relabel(NamespaceState st, Map<String, String> labels) {
        st.labels = labels;
        revision++;
    }

    /** The namespace's pod of this name is now {@code pod} (null: it is gone). */
    void putPod(NamespaceState st, String name, PodModel pod) {
        if (pod != null) {
            st.pods.put(name, pod);
        } else {
            st.pods.remove(name);
        }
        revision++;
    }

    /** A count that changes whenever a namespace comes or goes, or its labels or pods change. */
    long revision() {
        return revision;
    }
}
