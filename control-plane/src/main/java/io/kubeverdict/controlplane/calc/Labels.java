// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/** Label maps as the calculation keeps them: immutable, no nulls (a YAML "key:" is ""). */
public final class Labels {
    /** Kubernetes sets this label on every namespace (since 1.21); namespace selectors use it. */
    public static final String NAMESPACE_NAME = "kubernetes.io/metadata.name";

    /** The name part of a qualified name and a non-empty label value (apimachinery's qualifiedNameFmt). */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    private static final int NAME_MAX = 63;
    /** RFC 1123 subdomain, the optional prefix of a qualified name. */
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private static final int DNS_SUBDOMAIN_MAX = 253;

    private Labels() {}

    public static Map<String, String> copy(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new HashMap<>(labels.size() * 2);
        labels.forEach((k, v) -> {
            if (k != null) {
                out.put(k, v == null ? "" : v);
            }
        });
        return Map.copyOf(out);
    }

    /** A namespace's labels as the API server keeps them: with its name label. */
    public static Map<String, String> namespace(String name, Map<String, String> labels) {
        Map<String, String> out = new HashMap<>(copy(labels));
        out.put(NAMESPACE_NAME, name);
        return Map.copyOf(out);
    }

    /**
     * Why {@code key} is not a label key the API server would accept (a qualified name: an
     * optional DNS-subdomain prefix of at most 253 characters and '/', then a name of at most 63
     * characters of [A-Za-z0-9._-] that begins and ends alphanumeric), or empty when it is one.
     */
    public static Optional<String> keyProblem(String key) {
        if (key == null || key.isEmpty()) {
            return Optional.of("empty label key");
        }
        String name = key;
        int slash = key.indexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            if (!isDnsSubdomain(prefix)) {
                return Optional.of("invalid label key " + quote(key)
                        + ": the prefix must be a DNS subdomain of at most 253 characters");
            }
        }
        if (name.isEmpty() || name.length() > NAME_MAX || !NAME.matcher(name).matches()) {
            return Optional.of("invalid label key " + quote(key) + ": the name must be at most 63 characters"
                    + " of [A-Za-z0-9._-], beginning and ending alphanumeric");
        }
        return Optional.empty();
    }

    /** Whether {@code name} is an RFC 1123 subdomain of at most 253 characters (what node names are). */
    public static boolean isDnsSubdomain(String name) {
        return name != null
                && !name.isEmpty()
                && name.length() <= DNS_SUBDOMAIN_MAX
                && DNS_SUBDOMAIN.matcher(name).matches();
    }

    /** Why {@code value} is not a label value (empty, or like a key's name part), or empty when it is one. */
    public static Optional<String> valueProblem(String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        if (value.length() > NAME_MAX || !NAME.matcher(value).matches()) {
            return Optional.of("invalid label value " + quote(value) + ": must be empty or at most 63 characters"
                    + " of [A-Za-z0-9._-], beginning and ending alphanumeric");
        }
        return Optional.empty();
    }

    /** For messages: the text in quotes, shortened, control characters escaped. */
    private static String quote(String s) {
        String cut = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        StringBuilder sb = new StringBuilder("\"");
        cut.codePoints().forEach(c -> {
            if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
                sb.append(String.format("\\u%04x", c));
            } else {
                sb.appendCodePoint(c);
            }
        });
        return sb.append('"').toString();
    }
}
