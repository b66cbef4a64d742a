// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.calc.PolicyCompiler;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.calc.Staging;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Loads a directory of Kubernetes manifests ({@link ManifestFiles}: *.yaml, *.yml, *.json,
 * recursively, in path order; several documents per file; v1 List and typed lists such as
 * NetworkPolicyList) into Namespaces, Pods and NetworkPolicies, and the admin-tier policies and
 * Nodes ({@link AdminManifests}), <em>all or nothing</em>: if any
 * file or document cannot be read (not UTF-8, a syntax error, a duplicate key, an alias, a limit
 * of {@link ParserLimits} exceeded, an object without apiVersion, kind or metadata.name, a field of
 * the wrong type (of the Pod and Node fields the calculation reads: {@link ModelSerialization}
 * skips the others unchecked), an unknown field in metadata or a policy's spec, a kind or apiVersion
 * that {@link ManifestKinds} refuses: a misspelt or unknown policy kind or version) the whole load
 * is rejected with a {@link ManifestLoadException} that names every such place by file, line,
 * column and document.
 * A half-read directory must never become the cluster: what it leaves out (a policy, a pod) would
 * be allowed.
 *
 * <p>Other kinds (Deployments, Services …) are skipped and only counted ({@link SkippedKinds}).
 * What loads may still carry warnings: a later object with the same
 * kind and namespace/name replaces an earlier one, and every policy is checked with the
 * calculation's own compiler (admin-tier policies with its reader), whose problems (invalid CIDRs, ports, selectors: each narrowed, never
 * widened) are reported with the policy's place.
 */
public final class ManifestLoader {
    /** Errors reported with their place; more are only counted (each may need a search of its file). */
    static final int MAX_ERRORS = 50;

    private final KubernetesSerialization serialization = ModelSerialization.INSTANCE;
    private final ManifestParser parser;

    public ManifestLoader() {
        this(ParserLimits.DEFAULT);
    }

    public ManifestLoader(ParserLimits limits) {
        this.parser = new ManifestParser(limits);
    }

    public LoadedManifests load(Path dir) throws IOException, ManifestLoadException {
        return load(ManifestFiles.read(dir));
    }

    /** Loads files given as relative path -> content (the directory's files, as read once). */
    public LoadedManifests load(SortedMap<String, byte[]> files) throws ManifestLoadException {
        Collector c = new Collector();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            c.file(f.getKey(), f.getValue());
        }
        return c.result();
    }

    /** Loads one file given as text, for tests and single files. */
    public LoadedManifests loadText(String file, String text) throws ManifestLoadException {
        return load(new TreeMap<>(Map.of(file, text.getBytes(StandardCharsets.UTF_8))));
    }

    /**
     * Splits a YAML stream at "---" lines (and "..." end markers), dropping documents that hold only
     * comments or blank lines: the loader's document numbering, for whoever rewrites a manifest
     * file document by document (the sandbox). The loader itself reads documents with the YAML
     * parser, which agrees for every file without such lines inside block scalars.
     */
    public static List<String> splitDocuments(String text) {
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
        final List<ManifestProblem> warnings = new ArrayList<>();
        final List<ManifestProblem> errors = new ArrayList<>();
        final Map<String, Integer> skipped = new LinkedHashMap<>(); // kind -> objects, first seen first
        int moreErrors; // beyond MAX_ERRORS: counted, not located

        void file(String file, byte[] bytes) {
            ManifestParser.ParsedFile parsed;
            try {
                parsed = parser.parse(file, bytes);
            } catch (ManifestLoadException e) {
                e.errors().forEach(err -> {
                    if (errors.size() < MAX_ERRORS) {
                        errors.add(err);
                    } else {
                        moreErrors++;
                    }
                });
                return;
            }
            for (ManifestParser.Document d : parsed.documents()) {
                new DocumentReader(parsed, d).read();
            }
        }

        LoadedManifests result() throws ManifestLoadException {
            if (!errors.isEmpty()) {
                throw new ManifestLoadException(errors, moreErrors);
            }
            return new LoadedManifests(
                    List.copyOf(namespaces.values()),
                    List.copyOf(pods.values()),
                    List.copyOf(policies.values()),
                    Map.copyOf(origins),
                    List.copyOf(warnings),
                    List.copyOf(adminPolicies.values()),
                    List.copyOf(nodes.values()),
                    new SkippedKinds(skipped));
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
            warnings.add(problem);
        }

        <T extends HasMetadata> void replace(Map<String, T> into, String key, T obj, Origin origin) {
            Origin before = origins.get(key);
            if (before != null && StagedDirectory.holds(before.file()) != StagedDirectory.holds(origin.file())) {
                // Replacing would leave the live one unenforced, or enforce the staged one.
                ManifestProblem p = new ManifestProblem(
                        origin,
                        key + " is both live and staged (" + before + "); stage the copy under another name with "
                                + Staging.REPLACES_ANNOTATION);
                if (errors.size() < MAX_ERRORS) {
                    errors.add(p);
                } else {
                    moreErrors++;
                }
            }
            if (into.put(key, obj) != null) {
                warnings.add(new ManifestProblem(origin, key + " defined again; replaces " + origins.get(key)));
            }
            origins.put(key, origin);
        }

        /** One document: a single object or a list of them. */
        final class DocumentReader {
            final ManifestParser.ParsedFile file;
            final ManifestParser.Document doc;

            DocumentReader(ManifestParser.ParsedFile file, ManifestParser.Document doc) {
                this.file = file;
                this.doc = doc;
            }

            void read() {
                JsonNode tree = doc.tree();
                JsonPointer root = JsonPointer.empty();
                String kind = tree.isObject() && tree.get("kind") != null
                        ? tree.get("kind").asString("")
                        : "";
                if (tree.isObject() && kind.endsWith("List") && tree.has("items")) {
                    JsonNode items = tree.get("items");
                    JsonPointer at = root.appendProperty("items");
                    if (items.isNull()) {
                        return;
                    }
                    if (!items.isArray()) {
                        error(at, kind + ": items must be a list");
                        return;
                    }
                    for (int i = 0; i < items.size(); i++) {
                        JsonNode item = items.get(i);
                        if (!kind.equals("List") && item.isObject()) {
                            item = typedListItem(tree, kind, (ObjectNode) item);
                        }
                        object(item, at.appendIndex(i), true);
                    }
                    return;
                }
                object(tree, root, false);
            }

            /**
             * An item of a typed list (what the API returns for a list request, e.g. a
             * NetworkPolicyList) may leave out its kind and apiVersion: they are the list's.
             */
            private JsonNode typedListItem(JsonNode list, String listKind, ObjectNode item) {
                if (item.has("kind") && item.has("apiVersion")) {
                    return item;
                }
                ObjectNode typed = item.deepCopy();
                if (!typed.has("kind")) {
                    typed.put("kind", listKind.substring(0, listKind.length() - "List".length()));
                }
                if (!typed.has("apiVersion") && list.get("apiVersion") != null) {
                    typed.set("apiVersion", list.get("apiVersion"));
                }
                return typed;
            }

            void object(JsonNode node, JsonPointer at, boolean inList) {
                if (!node.isObject()) {
                    error(at, "not a Kubernetes object (a mapping with apiVersion, kind and metadata)");
                    return;
                }
                String apiVersion = string(node, at, "apiVersion");
                String kind = string(node, at, "kind");
                if (apiVersion == null || kind == null) {
                    return;
                }
                if (inList && kind.endsWith("List")) {
                    error(at, "a " + kind + " inside a list is not supported");
                    return;
                }
                ManifestKinds.Verdict verdict = ManifestKinds.classify(apiVersion, kind);
                boolean staged = StagedDirectory.holds(file.file());
                if (verdict instanceof ManifestKinds.Refuse refuse) {
                    error(at, refuse.reason());
                } else if (staged && (verdict instanceof ManifestKinds.Skip || !StagedDirectory.isPolicyKind(kind))) {
                    error(at, kind + " under " + StagedDirectory.PREFIX + ": only policies are staged");
                } else if (verdict instanceof ManifestKinds.Skip) {
                    skipped.merge(kind, 1, Integer::sum);
                } else if (staged) {
                    JsonNode marked = StagedDirectory.mark(node);
                    if (marked == null) {
                        error(at, kind + " under " + StagedDirectory.PREFIX + " annotated as not staged");
                    } else {
                        read(marked, at, kind);
                    }
                } else {
                    read(node, at, kind);
                }
            }

            /** An object of a kind and apiVersion that {@link ManifestKinds} reads. */
            private void read(JsonNode node, JsonPointer at, String kind) {
                switch (kind) {
                    case "Namespace" -> bind(node, at, Namespace.class).ifPresent(n -> put(namespaces, n, at));
                    case "Pod" ->
                        bind(node, at, Pod.class).ifPresent(p -> {
                            // At the object's place: searching the file for each field could take long.
                            UnknownFields.warnings(p)
                                    .forEach(f ->
                                            warning(at, "Pod field " + FieldPaths.dotted(f) + " is unknown; ignored"));
                            put(pods, p, at);
                        });
                    case "NetworkPolicy" ->
                        bind(node, at, NetworkPolicy.class).ifPresent(np -> {
                            Origin origin = origin(at);
                            for (PolicyProblem pp : PolicyCompiler.compile(np).problems()) {
                                warnings.add(new ManifestProblem(origin, pp.toString()));
                            }
                            put(policies, np, at);
                        });
                    case "Node" ->
                        bind(node, at, Node.class).ifPresent(n -> AdminManifests.accept(origin(at), n, Collector.this));
                    // The admin-tier policies, read as generic objects.
                    default ->
                        bind(node, at, GenericKubernetesResource.class)
                                .ifPresent(g -> AdminManifests.accept(origin(at), g, Collector.this));
                }
            }

            private String string(JsonNode node, JsonPointer at, String field) {
                JsonNode v = node.get(field);
                if (v == null || v.isNull() || (v.isString() && v.asString().isEmpty())) {
                    error(at, "object without " + field);
                    return null;
                }
                if (!v.isString()) {
                    error(at.appendProperty(field), field + " must be a string");
                    return null;
                }
                return v.asString();
            }

            /** The object bound to its model class, checked for a name and unknown fields; empty after an error. */
            private <T extends HasMetadata> Optional<T> bind(JsonNode node, JsonPointer at, Class<T> type) {
                T obj;
                try {
                    obj = serialization.convertValue(node, type);
                } catch (RuntimeException e) {
                    JacksonException je = jacksonCause(e);
                    JsonPointer field = je == null ? JsonPointer.empty() : FieldPaths.pointer(je.getPath());
                    String why = je == null || je.getOriginalMessage() == null
                            ? String.valueOf(e.getMessage())
                            : je.getOriginalMessage();
                    error(
                            at.append(field),
                            "cannot read " + type.getSimpleName()
                                    + (field.matches() ? "" : " field " + FieldPaths.dotted(field)) + ": "
                                    + firstLine(why));
                    return Optional.empty();
                }
                if (obj.getMetadata() == null
                        || obj.getMetadata().getName() == null
                        || obj.getMetadata().getName().isEmpty()) {
                    error(at, type.getSimpleName() + " without metadata.name");
                    return Optional.empty();
                }
                List<JsonPointer> unknown =
                        UnknownFields.errors(obj.getMetadata(), obj instanceof NetworkPolicy np ? np : null);
                for (JsonPointer f : unknown) {
                    error(at.append(f), type.getSimpleName() + " field " + FieldPaths.dotted(f) + " is unknown");
                }
                if (!unknown.isEmpty()) {
                    return Optional.empty();
                }
                boolean namespaced = obj instanceof Pod || obj instanceof NetworkPolicy;
                if (namespaced
                        && (obj.getMetadata().getNamespace() == null
                                || obj.getMetadata().getNamespace().isEmpty())) {
                    obj.getMetadata().setNamespace("default"); // as kubectl apply would
                }
                return Optional.of(obj);
            }

            private <T extends HasMetadata> void put(Map<String, T> into, T obj, JsonPointer at) {
                String ns = obj instanceof Namespace ? null : obj.getMetadata().getNamespace();
                replace(
                        into,
                        LoadedManifests.originKey(
                                obj.getKind(), ns, obj.getMetadata().getName()),
                        obj,
                        origin(at));
            }

            /** Where a place of this document is: exact for the document and its list items, else searched. */
            private Origin origin(JsonPointer at) {
                if (at.matches()) {
                    return doc.origin();
                }
                if (at.tail() != null
                        && at.tail().tail() != null
                        && at.tail().tail().matches()
                        && "items".equals(at.getMatchingProperty())
                        && at.tail().getMatchingIndex() >= 0) {
                    int i = at.tail().getMatchingIndex();
                    if (i < doc.items().size()) {
                        return doc.items().get(i);
                    }
                }
                return parser.locate(file, doc, at);
            }

            private void error(JsonPointer at, String message) {
                if (errors.size() < MAX_ERRORS) {
                    errors.add(new ManifestProblem(origin(at), message));
                } else {
                    moreErrors++;
                }
            }

            private void warning(JsonPointer at, String message) {
                warnings.add(new ManifestProblem(origin(at), message));
            }
        }
    }

    private static JacksonException jacksonCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JacksonException je) {
                return je;
            }
        }
        return null;
    }

    private static String firstLine(String m) {
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
