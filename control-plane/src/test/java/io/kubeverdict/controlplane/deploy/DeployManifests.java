package io.kubeverdict.controlplane.deploy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Reads the kustomize base under deploy/ into fabric8's typed model. */
final class DeployManifests {
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private DeployManifests() {}

    static Path deployDir() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("deploy/base"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("deploy/base not found above " + Path.of("").toAbsolutePath());
        }
        return dir.resolve("deploy");
    }

    static List<Path> yamlFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    /** Every document of a file, typed; throws when a document is not a known kind. */
    static List<HasMetadata> load(Path file) throws IOException {
        List<HasMetadata> objects = new ArrayList<>();
        for (String doc : Files.readString(file).split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            objects.add(SERIALIZATION.unmarshal(doc, HasMetadata.class));
        }
        return objects;
    }

    static <T extends HasMetadata> T find(Class<T> type, String name) throws IOException {
        for (Path file : yamlFiles(deployDir().resolve("base"))) {
            if (file.getFileName().toString().equals("kustomization.yaml")) {
                continue;
            }
            for (HasMetadata object : load(file)) {
                if (type.isInstance(object) && object.getMetadata().getName().equals(name)) {
                    return type.cast(object);
                }
            }
        }
        throw new IllegalStateException("no " + type.getSimpleName() + " named " + name + " in deploy/base");
    }
}
