// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;

/** Reads deploy/ into fabric8's typed model: single files, or what a kustomization renders. */
final class DeployManifests {
    static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private DeployManifests() {}

    static Path deployDir() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("deploy/base"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException(
                    "deploy/base not found above " + Path.of("").toAbsolutePath());
        }
        return dir.resolve("deploy");
    }

    static List<Path> yamlFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    /** Every document of a file, typed (kinds fabric8 does not know become GenericKubernetesResource). */
    static List<HasMetadata> load(Path file) {
        return Kustomize.documents(file).stream().map(DeployManifests::typed).toList();
    }

    /** What `kustomize build dir` applies, typed. */
    static List<HasMetadata> build(Path dir) {
        return Kustomize.build(dir).stream().map(DeployManifests::typed).toList();
    }

    /** What deploy/base applies. */
    static List<HasMetadata> base() {
        return build(deployDir().resolve("base"));
    }

    static HasMetadata typed(JsonNode object) {
        return SERIALIZATION.unmarshal(object.toString(), HasMetadata.class);
    }

    /** The pod template of a workload, or null for other kinds. */
    static PodTemplateSpec podTemplate(HasMetadata object) {
        return object instanceof Deployment d
                ? d.getSpec().getTemplate()
                : object instanceof DaemonSet ds ? ds.getSpec().getTemplate() : null;
    }

    static List<PodTemplateSpec> podTemplates(List<HasMetadata> objects) {
        return objects.stream()
                .map(DeployManifests::podTemplate)
                .filter(Objects::nonNull)
                .toList();
    }

    static <T extends HasMetadata> T find(Class<T> type, String name) {
        return find(base(), type, name);
    }

    static <T extends HasMetadata> T find(List<HasMetadata> objects, Class<T> type, String name) {
        return objects.stream()
                .filter(type::isInstance)
                .map(type::cast)
                .filter(o -> o.getMetadata().getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + type.getSimpleName() + " named " + name));
    }
}
