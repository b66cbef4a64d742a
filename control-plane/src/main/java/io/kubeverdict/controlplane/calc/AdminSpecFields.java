// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The parts of an admin-tier policy spec every reader shares ({@link AdminPolicyReader},
 * {@link AdminPeersReader}, {@link AdminPortsReader}): shape checks that name the field they
 * fail at, label selectors, and {@link Unusable}, which carries a failure up to where the rule
 * or subject it belongs to fails closed. Pure.
 */
final class AdminSpecFields {
    private static final KubernetesSerialization SERIALIZATION = ModelSerialization.INSTANCE;

    private AdminSpecFields() {}

    static Selector selector(String field, Object value) throws Unusable {
        if (!(value instanceof Map<?, ?>)) {
            throw new Unusable(field, value == null ? "missing label selector" : "not a label selector");
        }
        LabelSelector ls;
        try {
            ls = SERIALIZATION.convertValue(value, LabelSelector.class);
        } catch (RuntimeException e) {
            throw new Unusable(field, "unreadable label selector");
        }
        try {
            return Selector.of(ls);
        } catch (Selector.InvalidSelectorException e) {
            throw new Unusable(field, e.getMessage());
        }
    }

    static Map<?, ?> object(String field, Object value) throws Unusable {
        if (value instanceof Map<?, ?> m) {
            return m;
        }
        throw new Unusable(field, value == null ? "missing" : "not an object");
    }

    static List<?> nonEmptyList(String field, Object value) throws Unusable {
        if (value instanceof List<?> l && !l.isEmpty()) {
            return l;
        }
        throw new Unusable(field, value instanceof List<?> ? "empty (leave it out to match every port)" : "not a list");
    }

    /** Which of the known fields are present with a non-null value, in sorted order. */
    static List<String> setFields(Map<?, ?> m, Set<String> known) {
        return sorted(known).stream().filter(k -> m.get(k) != null).toList();
    }

    static List<String> sorted(Set<String> s) {
        return s.stream().sorted().toList();
    }

    /** Why a part of a rule or subject cannot be used, and where. */
    static final class Unusable extends Exception {
        final String field;

        Unusable(String field, String message) {
            super(message);
            this.field = field;
        }
    }
}
