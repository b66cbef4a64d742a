// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * `kustomize build` for the part of kustomize that deploy/ uses (there is no kustomize or kubectl
 * on the test machines): resources, components, a configMapGenerator without name hashes, and the
 * namespace, labels and images transformers, applied in kustomize's order (resources, components,
 * generators, transformers). Any other field of a kustomization fails the build instead of being
 * ignored, so what the tests check is what kustomize would apply.
 */
final class Kustomize {
    static final YAMLMapper YAML = YAMLMapper.builder().build();

    private static final Set<String> FIELDS = Set.of(
            "apiVersion", "kind", "resources", "components", "configMapGenerator", "namespace", "labels", "images");
    private static final Set<String> CLUSTER_SCOPED = Set.of(
            "Namespace",
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "PriorityClass",
            "StorageClass",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration");
    private static final Set<String> WITH_POD_TEMPLATE =
            Set.of("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job");

    private Kustomize() {}

    /** The objects `kustomize build dir` prints, as YAML trees. */
    static List<ObjectNode> build(Path dir) {
        JsonNode kustomization = read(dir, "Kustomization");
        List<ObjectNode> objects = new ArrayList<>();
        accumulate(dir, kustomization, objects);
        return objects;
    }

    private static void accumulate(Path dir, JsonNode kustomization, List<ObjectNode> objects) {
        for (JsonNode resource : kustomization.path("resources")) {
            Path path = dir.resolve(resource.asString()).normalize();
            if (Files.isDirectory(path)) {
                objects.addAll(build(path));
            } else {
                objects.addAll(documents(path));
            }
        }
        for (JsonNode component : kustomization.path("components")) {
            Path path = dir.resolve(component.asString()).normalize();
            accumulate(path, read(path, "Component"), objects);
        }
        for (JsonNode generator : kustomization.path("configMapGenerator")) {
            objects.add(configMap(dir, generator));
        }
        if (kustomization.has("namespace")) {
            String namespace = kustomization.get("namespace").asString();
            objects.stream()
                    .filter(o -> !CLUSTER_SCOPED.contains(o.path("kind").asString()))
                    .forEach(o -> o.withObject("metadata").put("namespace", namespace));
        }
        for (JsonNode labels : kustomization.path("labels")) {
            addLabels(dir, labels, objects);
        }
        for (JsonNode image : kustomization.path("images")) {
            objects.forEach(o -> setImage(o, image));
        }
    }

    private static JsonNode read(Path dir, String kind) {
        Path file = dir.resolve("kustomization.yaml");
        JsonNode kustomization = YAML.readTree(file.toFile());
        if (!kind.equals(kustomization.path("kind").asString())) {
            throw new IllegalArgumentException(file + ": kind " + kustomization.path("kind") + ", expected " + kind);
        }
        for (String field : kustomization.propertyNames()) {
            if (!FIELDS.contains(field)) {
                throw new UnsupportedOperationException(file + ": field '" + field + "' is not rendered by this test");
            }
        }
        return kustomization;
    }

    /** The documents of a multi-document YAML file; comment-only documents are skipped. */
    static List<ObjectNode> documents(Path file) {
        try {
            return documents(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<ObjectNode> documents(String yaml) {
        List<ObjectNode> objects = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            objects.add((ObjectNode) YAML.readTree(doc));
        }
        return objects;
    }

    private static ObjectNode configMap(Path dir, JsonNode generator) {
        requireOnly(generator, Set.of("name", "namespace", "files", "options"), dir + ": configMapGenerator");
        JsonNode options = generator.path("options");
        requireOnly(options, Set.of("disableNameSuffixHash", "labels"), dir + ": configMapGenerator options");
        if (!options.path("disableNameSuffixHash").asBoolean()) {
            throw new UnsupportedOperationException(dir + ": name-hashed ConfigMaps are not rendered by this test");
        }
        ObjectNode map = YAML.createObjectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
        ObjectNode metadata =
                map.putObject("metadata").put("name", generator.get("name").asString());
        if (generator.has("namespace")) {
            metadata.put("namespace", generator.get("namespace").asString());
        }
        if (options.has("labels")) {
            metadata.set("labels", options.get("labels").deepCopy());
        }
        ObjectNode data = map.putObject("data");
        for (JsonNode file : generator.path("files")) {
            String[] keyAndPath = file.asString().split("=", 2);
            Path path = dir.resolve(keyAndPath[keyAndPath.length - 1]);
            String key =
                    keyAndPath.length == 2 ? keyAndPath[0] : path.getFileName().toString();
            try {
                data.put(key, Files.readString(path));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return map;
    }

    private static void addLabels(Path dir, JsonNode entry, List<ObjectNode> objects) {
        requireOnly(entry, Set.of("pairs", "includeSelectors", "includeTemplates"), dir + ": labels");
        if (entry.path("includeSelectors").asBoolean()) {
            throw new UnsupportedOperationException(dir + ": labels in selectors are not rendered by this test");
        }
        boolean templates = entry.path("includeTemplates").asBoolean();
        for (ObjectNode object : objects) {
            List<ObjectNode> targets = new ArrayList<>(List.of(object.withObject("metadata")));
            if (templates && WITH_POD_TEMPLATE.contains(object.path("kind").asString())) {
                targets.add(object.withObject("spec").withObject("template").withObject("metadata"));
            }
            for (ObjectNode metadata : targets) {
                ObjectNode labels = metadata.withObject("labels");
                for (Map.Entry<String, JsonNode> pair : entry.path("pairs").properties()) {
                    labels.put(pair.getKey(), pair.getValue().asString());
                }
            }
        }
    }

    /** kustomize's images transformer: same image name (without tag or digest) gets the new name, tag or digest. */
    private static void setImage(ObjectNode object, JsonNode image) {
        requireOnly(image, Set.of("name", "newName", "newTag", "digest"), "images entry " + image);
        JsonNode pod = object.path("kind").asString().equals("Pod")
                ? object.path("spec")
                : object.path("spec").path("template").path("spec");
        for (String list : List.of("initContainers", "containers")) {
            for (JsonNode container : pod.path(list)) {
                String current = container.path("image").asString();
                if (!imageName(current).equals(image.get("name").asString())) {
                    continue;
                }
                String name = image.has("newName") ? image.get("newName").asString() : imageName(current);
                String reference = image.has("digest")
                        ? name + "@" + image.get("digest").asString()
                        : image.has("newTag")
                                ? name + ":" + image.get("newTag").asString()
                                : name + current.substring(imageName(current).length());
                ((ObjectNode) container).put("image", reference);
            }
        }
    }

    /** An image reference without its tag or digest; a registry's port is not a tag. */
    static String imageName(String reference) {
        int at = reference.indexOf('@');
        String withoutDigest = at < 0 ? reference : reference.substring(0, at);
        int colon = withoutDigest.lastIndexOf(':');
        return colon > withoutDigest.lastIndexOf('/') ? withoutDigest.substring(0, colon) : withoutDigest;
    }

    private static void requireOnly(JsonNode node, Set<String> fields, String where) {
        for (String field : node.propertyNames()) {
            if (!fields.contains(field)) {
                throw new UnsupportedOperationException(where + ": field '" + field + "' is not rendered by this test");
            }
        }
    }
}
