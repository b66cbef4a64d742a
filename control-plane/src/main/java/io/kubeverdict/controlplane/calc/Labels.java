package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.Map;

/** Label maps as the calculation keeps them: immutable, no nulls (a YAML "key:" is ""). */
public final class Labels {
    /** Kubernetes sets this label on every namespace (since 1.21); namespace selectors use it. */
    public static final String NAMESPACE_NAME = "kubernetes.io/metadata.name";

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
}
