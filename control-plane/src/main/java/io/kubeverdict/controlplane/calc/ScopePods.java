// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The endpoint pods of a scope (an {@link IpSetDef} without its port: one namespace or the
 * namespaces a selector matches, and a pod selector), per covered namespace. What is new to the
 * index over one scope — an admin-tier policy's named-port sets of three protocols, its subject's
 * {@link Selection}, an address set of the same pods — is filled from one walk of the namespaces
 * and one match of each pod, not one per set. A result is kept only while {@link
 * Namespaces#revision()} stands (no namespace came, went or was relabelled, no pod changed), for a
 * few scopes, and until {@link #forget()}: the index forgets when it is read, so the policies of
 * one burst of events (a full calculation: every policy over the same pods) share the walks, and
 * the pods listed here are not retained beside the calculation.
 */
final class ScopePods {
    /** A covered namespace and its endpoint pods the scope's pod selector matches. */
    record Covered(NamespaceState namespace, List<PodModel> pods) {}

    /**
     * Scopes kept: a policy's sets over one scope are acquired close together, and cluster-wide
     * scopes (an app everywhere, every pod) recur across a burst's policies. At most a few pod
     * lists as long as the cluster.
     */
    private static final int KEPT = 16;

    private final Namespaces namespaces;
    private final Map<IpSetDef, List<Covered>> kept = new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<IpSetDef, List<Covered>> eldest) {
            return size() > KEPT;
        }
    };
    /** The namespaces' revision {@link #kept} was found at. */
    private long keptAt = -1;

    ScopePods(Namespaces namespaces) {
        this.namespaces = namespaces;
    }

    /** Whether an endpoint pod of a namespace in scope is in the scope. */
    static boolean matches(IpSetDef scope, PodModel pod) {
        return pod.endpoint() && scope.podSelector().matches(pod.labels());
    }

    /**
     * The namespaces in the scope of {@code def} (its port ignored), each with its pods in scope;
     * a fixed namespace is made if new. The caller must not change the lists.
     */
    List<Covered> of(IpSetDef def) {
        IpSetDef scope = def.portName() == null
                ? def
                : new IpSetDef(def.namespace(), def.namespaceSelector(), def.podSelector(), null, null);
        if (scope.fixedNamespace()) {
            // Made first: making a namespace changes the revision.
            namespaces.getOrCreate(scope.namespace());
        }
        if (keptAt != namespaces.revision()) {
            kept.clear();
            keptAt = namespaces.revision();
        }
        List<Covered> found = kept.get(scope);
        if (found == null) {
            found = find(scope);
            kept.put(scope, found);
        }
        return found;
    }

    /** Drops what is kept (the pods listed would otherwise stay reachable). */
    void forget() {
        kept.clear();
    }

    private List<Covered> find(IpSetDef scope) {
        if (scope.fixedNamespace()) {
            NamespaceState st = namespaces.get(scope.namespace());
            return List.of(new Covered(st, podsIn(st, scope)));
        }
        List<Covered> out = new ArrayList<>();
        for (NamespaceState st : namespaces.all()) {
            if (scope.namespaceSelector().matches(st.labels)) {
                out.add(new Covered(st, podsIn(st, scope)));
            }
        }
        return out;
    }

    private static List<PodModel> podsIn(NamespaceState st, IpSetDef scope) {
        List<PodModel> out = new ArrayList<>();
        for (PodModel pod : st.pods.values()) {
            if (matches(scope, pod)) {
                out.add(pod);
            }
        }
        return out;
    }
}
