package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Test-only loader (the engine owns the real one): every *.yaml file, multi-document, via fabric8. */
final class YamlDirectoryLoader implements ManifestLoader {
    private final KubernetesSerialization serialization = new KubernetesSerialization();

    @Override
    public Result load(Path directory) throws IOException {
        List<HasMetadata> objects = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".yaml")).sorted()::iterator) {
                try (InputStream in = Files.newInputStream(f)) {
                    Object o = serialization.unmarshal(in);
                    if (o instanceof List<?> list) {
                        list.forEach(x -> objects.add((HasMetadata) x));
                    } else if (o instanceof HasMetadata h) {
                        objects.add(h);
                    }
                } catch (RuntimeException e) {
                    problems.add(f + ": " + e.getMessage());
                }
            }
        }
        return new Result(objects, problems);
    }
}
