// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A validated label selector in canonical form: matchLabels become "In" requirements, values are
 * sorted and de-duplicated, requirements are sorted. {@link #canonical()} is an unambiguous
 * encoding of that form (every key and value length-prefixed), so two selectors have equal
 * canonical text exactly when they are the same selector; identity, equality and IP-set ids come
 * from it, never from display text in which "a, b" and "a,b" could look alike. Keys and values
 * are validated as the API server validates them. An empty selector matches everything.
 */
public final class Selector {
    public enum Op {
        IN,
        NOT_IN,
        EXISTS,
        DOES_NOT_EXIST
    }

    public record Requirement(String key, Op op, List<String> values) {
        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (op) {
                case IN -> v != null && values.contains(v);
                case NOT_IN -> v == null || !values.contains(v);
                case EXISTS -> v != null;
                case DOES_NOT_EXIST -> v == null;
            };
        }

        /** key, operator, values; every string as its length, ':' and its characters. */
        String canonical() {
            StringBuilder sb = new StringBuilder();
            lengthPrefixed(sb, key).append(' ').append(op).append(" [");
            for (int i = 0; i < values.size(); i++) {
                lengthPrefixed(i == 0 ? sb : sb.append(' '), values.get(i));
            }
            return sb.append(']').toString();
        }

        /** kubectl's selector syntax ("app in (a,b)", "app", "!app"): for people, not for identity. */
        String readable() {
            return switch (op) {
                case IN -> key + " in (" + String.join(",", values) + ")";
                case NOT_IN -> key + " notin (" + String.join(",", values) + ")";
                case EXISTS -> key;
                case DOES_NOT_EXIST -> "!" + key;
            };
        }
    }

    /** Thrown for a selector the engine cannot use; the caller drops what it belonged to. */
    public static final class InvalidSelectorException extends Exception {
        public InvalidSelectorException(String message) {
            super(message);
        }
    }

    public static final Selector ALL = new Selector(List.of());

    private final List<Requirement> requirements;
    private final String canonical;

    private Selector(List<Requirement> requirements) {
        this.requirements = requirements;
        // Requirements are length-prefixed and of a fixed shape, so "; " cannot be confused with content.
        StringBuilder sb = new StringBuilder("{");
        for (Requirement r : requirements) {
            if (sb.length() > 1) {
                sb.append("; ");
            }
            sb.append(r.canonical());
        }
        this.canonical = sb.append('}').toString();
    }

    /** A null selector is treated as empty (match all); callers decide whether null is allowed. */
    public static Selector of(LabelSelector s) throws InvalidSelectorException {
        if (s == null) {
            return ALL;
        }
        List<Requirement> reqs = new ArrayList<>();
        if (s.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : s.getMatchLabels().entrySet()) {
                if (e.getKey() == null || e.getKey().isEmpty()) {
                    throw new InvalidSelectorException("matchLabels has an empty key");
                }
                String value = e.getValue() == null ? "" : e.getValue();
                checkKey(e.getKey());
                checkValue(value);
                reqs.add(new Requirement(e.getKey(), Op.IN, List.of(value)));
            }
        }
        if (s.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : s.getMatchExpressions()) {
                reqs.add(requirement(r));
            }
        }
        return of(reqs);
    }

    /** Canonical form of requirements whose keys and values were already checked. */
    static Selector of(List<Requirement> requirements) {
        List<Requirement> reqs = new ArrayList<>();
        for (Requirement r : requirements) {
            reqs.add(new Requirement(r.key(), r.op(), List.copyOf(new TreeSet<>(r.values()))));
        }
        reqs.sort(Comparator.comparing(Requirement::canonical));
        // Identical requirements are redundant; dropping them keeps equal selectors equal.
        List<Requirement> unique = new ArrayList<>();
        for (Requirement r : reqs) {
            if (unique.isEmpty() || !unique.get(unique.size() - 1).equals(r)) {
                unique.add(r);
            }
        }
        return new Selector(List.copyOf(unique));
    }

    private static Requirement requirement(LabelSelectorRequirement r) throws InvalidSelectorException {
        if (r == null) {
            throw new InvalidSelectorException("matchExpressions has an empty entry");
        }
        if (r.getKey() == null || r.getKey().isEmpty()) {
            throw new InvalidSelectorException("matchExpressions entry without key");
        }
        Op op;
        String operator = r.getOperator() == null ? "" : r.getOperator();
        switch (operator) {
            case "In" -> op = Op.IN;
            case "NotIn" -> op = Op.NOT_IN;
            case "Exists" -> op = Op.EXISTS;
            case "DoesNotExist" -> op = Op.DOES_NOT_EXIST;
            default ->
                throw new InvalidSelectorException("unknown operator \"" + operator + "\" for key " + r.getKey());
        }
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        boolean needsValues = op == Op.IN || op == Op.NOT_IN;
        if (needsValues && values.isEmpty()) {
            throw new InvalidSelectorException(operator + " needs values for key " + r.getKey());
        }
        if (!needsValues && !values.isEmpty()) {
            throw new InvalidSelectorException(operator + " takes no values for key " + r.getKey());
        }
        checkKey(r.getKey());
        TreeSet<String> sorted = new TreeSet<>();
        for (String v : values) {
            String value = v == null ? "" : v;
            checkValue(value);
            sorted.add(value);
        }
        return new Requirement(r.getKey(), op, List.copyOf(sorted));
    }

    private static void checkKey(String key) throws InvalidSelectorException {
        Optional<String> problem = Labels.keyProblem(key);
        if (problem.isPresent()) {
            throw new InvalidSelectorException(problem.get());
        }
    }

    private static void checkValue(String value) throws InvalidSelectorException {
        Optional<String> problem = Labels.valueProblem(value);
        if (problem.isPresent()) {
            throw new InvalidSelectorException(problem.get());
        }
    }

    /** The string as its length, ':' and its characters: unambiguous whatever it contains. */
    static StringBuilder lengthPrefixed(StringBuilder sb, String s) {
        return sb.append(s.length()).append(':').append(s);
    }

    public boolean matches(Map<String, String> labels) {
        for (int i = 0; i < requirements.size(); i++) {
            if (!requirements.get(i).matches(labels)) {
                return false;
            }
        }
        return true;
    }

    public boolean isEmpty() {
        return requirements.isEmpty();
    }

    public List<Requirement> requirements() {
        return requirements;
    }

    public String canonical() {
        return canonical;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Selector s && s.canonical.equals(canonical);
    }

    @Override
    public int hashCode() {
        return canonical.hashCode();
    }

    /** The requirements in kubectl's syntax, comma-separated; "" for the empty selector. */
    public String readable() {
        return String.join(
                ", ", requirements.stream().map(Requirement::readable).toList());
    }

    @Override
    public String toString() {
        return canonical;
    }
}
