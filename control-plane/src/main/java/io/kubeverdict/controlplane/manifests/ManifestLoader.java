package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.controlplane.calc.PolicyCompiler;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Loads a directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively, in path order;
 * several documents per file; v1 List objects) into Namespaces, Pods and NetworkPolicies with
 * fabric8's serialization, and the admin-tier policies and Nodes ({@link AdminManifests}). Other kinds and unreadable documents are reported and skipped; a
 * later object with the same kind and namespace/name replaces an earlier one (reported).
 *
 * <p>Never widening: a NetworkPolicy document whose spec cannot be read as a NetworkPolicy is
 * replaced by one with the same name that isolates the pods its podSelector selects (its whole
 * namespace if even that cannot be read) in both directions and allows nothing. Usable policies
 * are also checked with the calculation's own compiler so its problems carry file and document.
 */
public final class ManifestLoader {
    private final KubernetesSerialization serialization = new KubernetesSerialization();

    public LoadedManifests load(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(Files::isRegularFile)
                    .filter(p -> {
                        String n = p.getFileName().toString();
                        return n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json");
                    })
                    .sorted(Comparator.comparing(p -> dir.relativize(p).toString()))
                    .toList();
        }
        Collector c = new Collector();
        for (Path f : files) {
            String rel = dir.relativize(f).toString();
            String text = Files.readString(f, StandardCharsets.UTF_8);
            List<String> docs = splitDocuments(text);
            for (int i = 0; i < docs.size(); i++) {
                c.document(new Origin(rel, i + 1), docs.get(i));
            }
        }
        return c.result();
    }

    /** Loads documents given as text, for tests and for single files. */
    public LoadedManifests loadText(String file, String text) {
        Collector c = new Collector();
        List<String> docs = splitDocuments(text);
        for (int i = 0; i < docs.size(); i++) {
            c.document(new Origin(file, i + 1), docs.get(i));
        }
        return c.result();
    }

    /** Splits a YAML stream at "---" lines; drops documents holding only comments/blank lines. */
    static List<String> splitDocuments(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (String line : text.split("\r?\n", -1)) {
            if (line.equals("---") || line.startsWith("--- ") || line.startsWith("---\t") || line.equals("...")) {
                addIfContent(out, cur.toString());
                cur.setLength(0);
                if (line.startsWith("--- ")) {
                    cur.append(line.substring(4)).append('\n');
                }
                continue;
            }
            cur.append(line).append('\n');
        }
        addIfContent(out, cur.toString());
        return out;
    }

    private static void addIfContent(List<String> out, String doc) {
        for (String line : doc.split("\n")) {
            String t = line.strip();
            if (!t.isEmpty() && !t.startsWith("#")) {
                out.add(doc);
                return;
            }
        }
    }

    private final class Collector implements AdminManifests.Sink {
        final Map<String, GenericKubernetesResource> adminPolicies = new TreeMap<>();
        final Map<String, Node> nodes = new TreeMap<>();
        final Map<String, Namespace> namespaces = new TreeMap<>();
        final Map<String, Pod> pods = new TreeMap<>();
        final Map<String, NetworkPolicy> policies = new TreeMap<>();
        final Map<String, Origin> origins = new LinkedHashMap<>();
        final List<ManifestProblem> problems = new ArrayList<>();

        void document(Origin origin, String text) {
            Object parsed;
            try {
                parsed = serialization.unmarshal(text);
            } catch (RuntimeException e) {
                problems.add(new ManifestProblem(origin, "unreadable document: " + firstLine(e)));
                // The document may still say it is a NetworkPolicy: read it loosely to fail closed.
                failClosedPolicy(origin, text);
                return;
            }
            object(origin, parsed);
        }

        void object(Origin origin, Object parsed) {
            if (parsed instanceof KubernetesList list) {
                for (HasMetadata item : list.getItems()) {
                    object(origin, item);
                }
            } else if (parsed instanceof Namespace n) {
                if (named(origin, n)) {
                    put(namespaces, "Namespace", null, n, origin);
                }
            } else if (parsed instanceof Pod p) {
                if (named(origin, p)) {
                    defaultNamespace(p);
                    put(pods, "Pod", p.getMetadata().getNamespace(), p, origin);
                }
            } else if (parsed instanceof NetworkPolicy np) {
                if (named(origin, np)) {
                    defaultNamespace(np);
                    if (!"networking.k8s.io/v1".equals(np.getApiVersion())) {
                        problems.add(new ManifestProblem(origin, "NetworkPolicy with apiVersion \""
                                + np.getApiVersion() + "\" read as networking.k8s.io/v1"));
                    }
                    for (PolicyProblem pp : PolicyCompiler.compile(np).problems()) {
                        problems.add(new ManifestProblem(origin, pp.toString()));
                    }
                    put(policies, "NetworkPolicy", np.getMetadata().getNamespace(), np, origin);
                }
            } else if (parsed instanceof HasMetadata h && AdminManifests.handles(h)) {
                if (named(origin, h)) {
                    AdminManifests.accept(origin, h, this);
                }
            } else if (parsed instanceof HasMetadata h) {
                problems.add(new ManifestProblem(origin, "unsupported kind " + h.getApiVersion() + "/"
                        + h.getKind() + " " + (h.getMetadata() == null ? "" : h.getMetadata().getName())
                        + "; ignored"));
            } else {
                problems.add(new ManifestProblem(origin, "not a Kubernetes object; ignored"));
            }
        }

        boolean named(Origin origin, HasMetadata h) {
            if (h.getMetadata() == null || h.getMetadata().getName() == null || h.getMetadata().getName().isEmpty()) {
                problems.add(new ManifestProblem(origin, h.getKind() + " without metadata.name; ignored"));
                return false;
            }
            return true;
        }

        void defaultNamespace(HasMetadata h) {
            if (h.getMetadata().getNamespace() == null || h.getMetadata().getNamespace().isEmpty()) {
                h.getMetadata().setNamespace("default");
            }
        }

        <T extends HasMetadata> void put(Map<String, T> into, String kind, String ns, T obj, Origin origin) {
            replace(into, LoadedManifests.originKey(kind, ns, obj.getMetadata().getName()), obj, origin);
        }

        <T extends HasMetadata> void replace(Map<String, T> into, String key, T obj, Origin origin) {
            if (into.put(key, obj) != null) {
                problems.add(new ManifestProblem(origin, key + " defined again; replaces " + origins.get(key)));
            }
            origins.put(key, origin);
        }

        void failClosedPolicy(Origin origin, String text) {
            Map<?, ?> tree;
            try {
                Object o = serialization.unmarshal(text, Map.class);
                if (!(o instanceof Map<?, ?> m)) {
                    return;
                }
                tree = m;
            } catch (RuntimeException e) {
                return; // not even YAML: nothing says it was a policy
            }
            if (!"NetworkPolicy".equals(tree.get("kind")) || !(tree.get("metadata") instanceof Map<?, ?> meta)
                    || !(meta.get("name") instanceof String name)) {
                return;
            }
            String ns = meta.get("namespace") instanceof String s && !s.isEmpty() ? s : "default";
            LabelSelector selector = new LabelSelector();
            if (tree.get("spec") instanceof Map<?, ?> spec && spec.get("podSelector") != null) {
                try {
                    selector = serialization.convertValue(spec.get("podSelector"), LabelSelector.class);
                } catch (RuntimeException e) {
                    selector = new LabelSelector();
                }
            }
            NetworkPolicy closed = new NetworkPolicyBuilder()
                    .withMetadata(new ObjectMeta())
                    .editMetadata().withNamespace(ns).withName(name).endMetadata()
                    .withNewSpec().withPodSelector(selector).withPolicyTypes("Ingress", "Egress").endSpec()
                    .build();
            problems.add(new ManifestProblem(origin, "NetworkPolicy " + ns + "/" + name
                    + " could not be read; it isolates " + (isEmpty(selector) ? "every pod of its namespace"
                    : "the pods it selects") + " in both directions and allows nothing"));
            put(policies, "NetworkPolicy", ns, closed, origin);
        }

        @Override
        public void adminPolicy(String key, GenericKubernetesResource policy, Origin origin) {
            replace(adminPolicies, key, policy, origin);
        }

        @Override
        public void node(String key, Node node, Origin origin) {
            replace(nodes, key, node, origin);
        }

        @Override
        public void problem(ManifestProblem problem) {
            problems.add(problem);
        }

        LoadedManifests result() {
            return new LoadedManifests(List.copyOf(namespaces.values()), List.copyOf(pods.values()),
                    List.copyOf(policies.values()), Map.copyOf(origins), List.copyOf(problems),
                    List.copyOf(adminPolicies.values()), List.copyOf(nodes.values()));
        }
    }

    private static boolean isEmpty(LabelSelector s) {
        return (s.getMatchLabels() == null || s.getMatchLabels().isEmpty())
                && (s.getMatchExpressions() == null || s.getMatchExpressions().isEmpty());
    }

    private static String firstLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
