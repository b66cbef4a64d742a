// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The objects a load skipped (kinds kube-verdict does not read: Deployments, Services …), counted
 * by kind in the order first seen. Reported once per load as one line, not per object: they are
 * expected in an application's manifests, and what could be a misspelt policy is refused instead
 * ({@link ManifestKinds}).
 */
public record SkippedKinds(Map<String, Integer> byKind) {
    public static final SkippedKinds NONE = new SkippedKinds(Map.of());

    public SkippedKinds {
        byKind = Collections.unmodifiableMap(new LinkedHashMap<>(byKind));
    }

    public int count() {
        return byKind.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** "skipped 3 objects of kinds not read: Deployment x2, Service", or "" when none was. */
    public String summary() {
        if (byKind.isEmpty()) {
            return "";
        }
        int n = count();
        return "skipped " + n + " object" + (n == 1 ? "" : "s") + " of kinds not read: "
                + byKind.entrySet().stream()
                        .map(e -> e.getKey() + (e.getValue() == 1 ? "" : " x" + e.getValue()))
                        .collect(Collectors.joining(", "));
    }
}
