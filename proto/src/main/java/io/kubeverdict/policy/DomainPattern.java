// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One domain-name pattern of a {@code domainNames} peer, in the form the contract carries: an
 * exact name ({@code api.example.com}) or {@code *.} and a name ({@code *.example.com}: every
 * name with one or more labels before {@code example.com}, not {@code example.com} itself), lower
 * case, without a trailing dot. {@link #canonical} is what the control plane writes;
 * {@link #matches} is what the agent asks of a name read from a DNS answer (ASCII, labels joined
 * by dots, any case), without allocating. Immutable.
 */
public final class DomainPattern {

    /** Upstream's DomainName validation (network-policy-api), with the A-z range it means as A-Za-z. */
    private static final Pattern VALID = Pattern.compile(
            "^(\\*\\.)?([a-zA-Z0-9]([-a-zA-Z0-9_]*[a-zA-Z0-9])?\\.)+[a-zA-Z0-9]([-a-zA-Z0-9_]*[a-zA-Z0-9])?\\.?$");

    private static final int MAX_NAME = 253;
    private static final int MAX_LABEL = 63;

    private final String text;
    private final boolean wildcard;
    /** The name part (after "*."), lower-case ASCII. */
    private final byte[] suffix;

    private DomainPattern(String text) {
        this.text = text;
        this.wildcard = text.startsWith("*.");
        this.suffix = (wildcard ? text.substring(2) : text).getBytes(StandardCharsets.US_ASCII);
    }

    /** The canonical form (lower case, no trailing dot), or null when it is no valid pattern. */
    public static String canonical(String pattern) {
        if (pattern == null || !VALID.matcher(pattern).matches()) {
            return null;
        }
        String c = pattern.toLowerCase(Locale.ROOT);
        if (c.endsWith(".")) {
            c = c.substring(0, c.length() - 1);
        }
        String name = c.startsWith("*.") ? c.substring(2) : c;
        if (name.length() > MAX_NAME) {
            return null;
        }
        for (String label : name.split("\\.")) {
            if (label.length() > MAX_LABEL) {
                return null;
            }
        }
        return c;
    }

    /** A pattern from its text, canonicalised; null when invalid. */
    public static DomainPattern of(String pattern) {
        String c = canonical(pattern);
        return c == null ? null : new DomainPattern(c);
    }

    /**
     * Whether the name in {@code name[from, from + length)} (ASCII, labels joined by '.', no
     * trailing dot, any case) matches: equal to the name, or for a wildcard ending in "." + name
     * with at least one character before.
     */
    public boolean matches(byte[] name, int from, int length) {
        int n = suffix.length;
        if (wildcard ? length < n + 2 : length != n) {
            return false;
        }
        int start = from + length - n;
        if (wildcard && name[start - 1] != '.') {
            return false;
        }
        for (int i = 0; i < n; i++) {
            int c = name[start + i];
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (c != suffix[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return text;
    }
}
