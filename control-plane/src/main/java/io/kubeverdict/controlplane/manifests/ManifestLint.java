package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.utils.KubernetesResourceUtil;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What fabric8 read but Kubernetes would not have accepted as written, with the path of each:
 * fields fabric8's parser did not know (it keeps them in the objects' {@code additionalProperties}:
 * {@code spec.podSelectr}, {@code spec.ingres}) and label keys or values that fabric8's
 * {@link KubernetesResourceUtil} calls invalid, in {@code metadata.labels} and in every label
 * selector. A typo like these silently changes what a policy selects; the loader reports them.
 */
public final class ManifestLint {
    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";
    private static final Map<Class<?>, List<Method>> GETTERS = new ConcurrentHashMap<>();
    private static final Set<String> NOT_WALKED = Set.of("getAdditionalProperties", "getClass");

    private ManifestLint() {}

    /** Problems of one parsed object, each "path: what", in document order of the walk. */
    public static List<String> check(Object object) {
        List<String> out = new ArrayList<>();
        walk(object, "", out);
        return out;
    }

    private static void walk(Object node, String path, List<String> out) {
        if (node == null) {
            return;
        }
        if (node instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                walk(list.get(i), path + "[" + i + "]", out);
            }
            return;
        }
        if (!node.getClass().getPackageName().startsWith(MODEL_PACKAGE)) {
            return;
        }
        additionalProperties(node, path, out);
        if (node instanceof ObjectMeta meta) {
            labels(meta.getLabels(), join(path, "labels"), out);
        } else if (node instanceof LabelSelector selector) {
            labels(selector.getMatchLabels(), join(path, "matchLabels"), out);
            List<LabelSelectorRequirement> expressions = selector.getMatchExpressions();
            for (int i = 0; expressions != null && i < expressions.size(); i++) {
                expression(expressions.get(i), join(path, "matchExpressions") + "[" + i + "]", out);
            }
        }
        for (Method getter : getters(node.getClass())) {
            Object child;
            try {
                child = getter.invoke(node);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            walk(child, join(path, property(getter)), out);
        }
    }

    private static void additionalProperties(Object node, String path, List<String> out) {
        try {
            Method m = node.getClass().getMethod("getAdditionalProperties");
            if (m.invoke(node) instanceof Map<?, ?> unknown) {
                unknown.keySet().stream().map(String::valueOf).sorted().forEach(name ->
                        out.add(join(path, name) + ": unknown field (ignored; check the spelling)"));
            }
        } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
            // not a model object with additional properties
        }
    }

    private static void labels(Map<String, String> labels, String path, List<String> out) {
        if (labels == null) {
            return;
        }
        labels.forEach((k, v) -> {
            if (!KubernetesResourceUtil.isValidKey(k)) {
                out.add(path + "[\"" + k + "\"]: invalid label key");
            } else if (!validValue(k, v)) {
                out.add(path + "[\"" + k + "\"]: invalid label value \"" + v + "\"");
            }
        });
    }

    private static void expression(LabelSelectorRequirement r, String path, List<String> out) {
        if (r.getKey() != null && !KubernetesResourceUtil.isValidKey(r.getKey())) {
            out.add(join(path, "key") + ": invalid label key \"" + r.getKey() + "\"");
        }
        List<String> values = r.getValues();
        for (int i = 0; values != null && i < values.size(); i++) {
            if (!validValue(r.getKey() == null ? "k" : r.getKey(), values.get(i))) {
                out.add(join(path, "values") + "[" + i + "]: invalid label value \"" + values.get(i) + "\"");
            }
        }
    }

    /** fabric8's label check, except that an empty value is valid (Kubernetes allows it). */
    private static boolean validValue(String key, String value) {
        return value == null || value.isEmpty()
                || KubernetesResourceUtil.areLabelsValid(Map.of(KubernetesResourceUtil.isValidKey(key) ? key : "k", value));
    }

    /** Public no-argument getters of a model class (its fields as fabric8's parser fills them). */
    private static List<Method> getters(Class<?> type) {
        return GETTERS.computeIfAbsent(type, t -> {
            List<Method> out = new ArrayList<>();
            for (Method m : t.getMethods()) {
                if (m.getParameterCount() == 0 && !Modifier.isStatic(m.getModifiers()) && m.getName().startsWith("get")
                        && m.getName().length() > 3 && !NOT_WALKED.contains(m.getName())
                        && m.getDeclaringClass().getPackageName().startsWith(MODEL_PACKAGE)) {
                    out.add(m);
                }
            }
            out.sort(Comparator.comparing(Method::getName));
            return List.copyOf(out);
        });
    }

    private static String property(Method getter) {
        String n = getter.getName().substring(3);
        return Character.toLowerCase(n.charAt(0)) + n.substring(1);
    }

    private static String join(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }
}
