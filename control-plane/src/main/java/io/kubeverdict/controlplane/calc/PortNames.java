// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.regex.Pattern;

/** Container port names as Kubernetes validates them (IANA_SVC_NAME). */
final class PortNames {
    private static final Pattern IANA_SVC_NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?");

    private PortNames() {}

    /** 1-15 lowercase letters, digits and single inner hyphens, at least one letter. */
    static boolean valid(String name) {
        return name != null
                && IANA_SVC_NAME.matcher(name).matches()
                && !name.contains("--")
                && name.chars().anyMatch(c -> c >= 'a' && c <= 'z');
    }
}
