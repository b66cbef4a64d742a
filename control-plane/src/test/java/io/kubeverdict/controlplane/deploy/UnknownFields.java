// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Fields of a manifest that fabric8's typed model does not know (a misspelt or misplaced field
 * kubectl would reject or drop): Jackson puts them in the model's additionalProperties.
 */
final class UnknownFields {
    private UnknownFields() {}

    /** "Kind/name.Path.To: [field, ...]" for every object of the model that has unknown fields. */
    static List<String> of(io.fabric8.kubernetes.api.model.HasMetadata object) {
        List<String> unknown = new ArrayList<>();
        collect(object, object.getKind() + "/" + object.getMetadata().getName(), unknown);
        return unknown;
    }

    /** Walks fabric8 model getters. */
    private static void collect(Object node, String path, List<String> unknown) {
        if (node == null || !node.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0
                    || Modifier.isStatic(getter.getModifiers())
                    || !getter.getName().startsWith("get")
                    || getter.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value = invoke(getter, node);
            String child = path + "." + getter.getName().substring(3);
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    unknown.add(path + ": " + extra.keySet());
                }
            } else if (value instanceof Collection<?> items) {
                int i = 0;
                for (Object item : items) {
                    collect(item, child + "[" + i++ + "]", unknown);
                }
            } else if (value instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    collect(e.getValue(), child + "[" + e.getKey() + "]", unknown);
                }
            } else {
                collect(value, child, unknown);
            }
        }
    }

    private static Object invoke(Method getter, Object node) {
        try {
            return getter.invoke(node);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(getter + " on " + node.getClass().getName(), e);
        }
    }
}
