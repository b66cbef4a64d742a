// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.calc.AdminSpecFields.object;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.selector;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.setFields;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.sorted;

import io.kubeverdict.controlplane.calc.AdminPolicy.Action;
import io.kubeverdict.controlplane.calc.AdminPolicy.DomainNames;
import io.kubeverdict.controlplane.calc.AdminPolicy.Networks;
import io.kubeverdict.controlplane.calc.AdminPolicy.Nodes;
import io.kubeverdict.controlplane.calc.AdminPolicy.Peer;
import io.kubeverdict.controlplane.calc.AdminPolicy.Pods;
import io.kubeverdict.controlplane.calc.AdminSpecFields.Unusable;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.DomainPattern;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads the peers of an admin-tier rule ({@code from}/{@code to}: namespaces, pods, nodes,
 * networks, domainNames; the same in both API versions) and the namespaced pod selector a
 * subject shares with pod peers. A peer that cannot be used throws {@link Unusable}: the rule
 * fails closed. Pure.
 */
final class AdminPeersReader {
    private AdminPeersReader() {}

    static List<Peer> peers(String field, Object value, boolean ingress, Action action) throws Unusable {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw new Unusable(field, value == null ? "missing" : value instanceof List<?> ? "empty" : "not a list");
        }
        Set<String> known = ingress
                ? Set.of("namespaces", "pods")
                : Set.of("namespaces", "pods", "nodes", "networks", "domainNames");
        List<Peer> out = new ArrayList<>();
        for (int j = 0; j < list.size(); j++) {
            String f = field + "[" + j + "]";
            if (!(list.get(j) instanceof Map<?, ?> p)) {
                throw new Unusable(f, "not an object");
            }
            List<String> set = setFields(p, known);
            if (set.size() != 1) {
                throw new Unusable(
                        f,
                        set.isEmpty()
                                ? "sets none of " + String.join(", ", sorted(known))
                                : "sets more than one of " + String.join(", ", set));
            }
            String which = set.get(0);
            Object v = p.get(which);
            switch (which) {
                case "namespaces" -> out.add(new Pods(selector(f + ".namespaces", v), Selector.ALL));
                case "pods" -> out.add(namespacedPod(f + ".pods", v));
                case "nodes" -> out.add(new Nodes(selector(f + ".nodes", v)));
                case "networks" -> out.add(networks(f + ".networks", v));
                default -> {
                    if (action != Action.ALLOW) {
                        throw new Unusable(f + ".domainNames", "domainNames are allowed in Allow/Accept rules only");
                    }
                    out.add(domainNames(f + ".domainNames", v));
                }
            }
        }
        return out;
    }

    /** Whether a peer list names nodes, networks or domainNames (which have no named ports). */
    static boolean hasNonPodPeer(Object peers) {
        return peers instanceof List<?> list
                && list.stream()
                        .anyMatch(p -> p instanceof Map<?, ?> m
                                && (m.get("nodes") != null
                                        || m.get("networks") != null
                                        || m.get("domainNames") != null));
    }

    /** A non-empty list of valid patterns, canonical (lower case, no trailing dot), sorted and distinct. */
    static DomainNames domainNames(String field, Object value) throws Unusable {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw new Unusable(field, "must be a non-empty list of domain names");
        }
        TreeSet<String> patterns = new TreeSet<>();
        for (int k = 0; k < list.size(); k++) {
            String c = list.get(k) instanceof String s ? DomainPattern.canonical(s) : null;
            if (c == null) {
                throw new Unusable(
                        field + "[" + k + "]",
                        "invalid domain name \"" + list.get(k)
                                + "\" (a name of two or more labels, optionally prefixed with *.)");
            }
            patterns.add(c);
        }
        return new DomainNames(List.copyOf(patterns));
    }

    static Networks networks(String field, Object value) throws Unusable {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw new Unusable(field, "must be a non-empty list of CIDRs");
        }
        List<Cidr> cidrs = new ArrayList<>();
        for (int k = 0; k < list.size(); k++) {
            Cidr c = list.get(k) instanceof String s ? Cidr.tryParse(s) : null;
            if (c == null) {
                throw new Unusable(field + "[" + k + "]", "invalid CIDR \"" + list.get(k) + "\"");
            }
            cidrs.add(c);
        }
        return new Networks(List.copyOf(cidrs));
    }

    /** {namespaceSelector (optional: every namespace), podSelector (required)}. */
    static Pods namespacedPod(String field, Object value) throws Unusable {
        Map<?, ?> m = object(field, value);
        if (!m.containsKey("podSelector")) {
            throw new Unusable(field + ".podSelector", "missing");
        }
        Selector namespaces = m.get("namespaceSelector") == null
                ? Selector.ALL
                : selector(field + ".namespaceSelector", m.get("namespaceSelector"));
        return new Pods(namespaces, selector(field + ".podSelector", m.get("podSelector")));
    }
}
