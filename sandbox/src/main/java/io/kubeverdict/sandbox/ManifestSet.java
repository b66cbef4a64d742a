package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.Protocol;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * A directory of Kubernetes manifests (*.yaml, *.yml, *.json; several documents per file, kind
 * List too) as plain maps: the sandbox reads its Pods and writes a copy in which every Pod has the
 * node and IPs of a {@link Placement}, so the control plane, the agents and `matrix` all see the
 * same pods.
 */
public final class ManifestSet {
    private final Map<Path, List<Object>> documents;

    private ManifestSet(Map<Path, List<Object>> documents) {
        this.documents = documents;
    }

    static boolean isManifest(Path file) {
        String name = file.getFileName().toString();
        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json"));
    }

    public static ManifestSet load(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("manifest directory " + dir + " does not exist");
        }
        Map<Path, List<Object>> documents = new LinkedHashMap<>();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).filter(ManifestSet::isManifest).sorted().toList();
        }
        for (Path file : files) {
            List<Object> docs = new ArrayList<>();
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                for (Object doc : new Yaml(new LoaderOptions()).loadAll(in)) {
                    if (doc != null) {
                        docs.add(doc);
                    }
                }
            } catch (RuntimeException e) {
                throw new IOException("cannot read " + file + ": " + e.getMessage(), e);
            }
            documents.put(dir.relativize(file), docs);
        }
        return new ManifestSet(documents);
    }

    public List<SandboxPod> pods() {
        List<SandboxPod> pods = new ArrayList<>();
        forEachPod(pod -> pods.add(toPod(pod)));
        return pods;
    }

    /**
     * Writes every manifest into dir with the placement applied to the pods (node, IPs, phase
     * Running), each file replaced atomically so a directory watcher never reads half a file; files
     * of dir that are no longer manifests here are removed.
     */
    public void writeAssigned(Placement placement, Path dir) throws IOException {
        forEachPod(pod -> {
            String name = toPod(pod).name();
            if (!placement.nodeOf().containsKey(name)) {
                return;
            }
            Map<String, Object> spec = child(pod, "spec");
            spec.put("nodeName", placement.nodeOf().get(name));
            Map<String, Object> status = child(pod, "status");
            List<String> ips = placement.ipsOf().get(name);
            status.put("phase", "Running");
            status.put("podIP", ips.get(0));
            List<Map<String, Object>> podIps = new ArrayList<>();
            ips.forEach(ip -> podIps.add(new LinkedHashMap<>(Map.of("ip", ip))));
            status.put("podIPs", podIps);
        });
        Files.createDirectories(dir);
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        Yaml yaml = new Yaml(options);
        List<Path> written = new ArrayList<>();
        for (Map.Entry<Path, List<Object>> e : documents.entrySet()) {
            Path relative = e.getKey();
            String fileName = relative.getFileName().toString();
            if (fileName.endsWith(".json")) {
                relative = relative.resolveSibling(fileName + ".yaml");
            }
            Path target = dir.resolve(relative);
            Files.createDirectories(target.getParent());
            String content = yaml.dumpAll(e.getValue().iterator());
            written.add(target);
            if (Files.isRegularFile(target) && Files.readString(target, StandardCharsets.UTF_8).equals(content)) {
                continue; // unchanged: no event for the watcher
            }
            Path temp = target.resolveSibling("." + target.getFileName() + ".tmp");
            Files.writeString(temp, content, StandardCharsets.UTF_8);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path stale : walk.filter(Files::isRegularFile).filter(ManifestSet::isManifest)
                    .filter(f -> !written.contains(f)).toList()) {
                Files.delete(stale);
            }
        }
    }

    private interface PodVisitor {
        void visit(Map<String, Object> pod);
    }

    @SuppressWarnings("unchecked")
    private void forEachPod(PodVisitor visitor) {
        for (List<Object> docs : documents.values()) {
            for (Object doc : docs) {
                if (!(doc instanceof Map<?, ?> map)) {
                    continue;
                }
                if ("List".equals(map.get("kind")) && map.get("items") instanceof List<?> items) {
                    for (Object item : items) {
                        if (item instanceof Map<?, ?> m && "Pod".equals(m.get("kind"))) {
                            visitor.visit((Map<String, Object>) m);
                        }
                    }
                } else if ("Pod".equals(map.get("kind"))) {
                    visitor.visit((Map<String, Object>) map);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> child(Map<String, Object> parent, String key) {
        Object value = parent.get(key);
        if (value instanceof Map<?, ?> map) {
            return (Map<String, Object>) map;
        }
        Map<String, Object> created = new LinkedHashMap<>();
        parent.put(key, created);
        return created;
    }

    private static SandboxPod toPod(Map<String, Object> pod) {
        Map<?, ?> metadata = map(pod.get("metadata"));
        Map<?, ?> spec = map(pod.get("spec"));
        Map<?, ?> status = map(pod.get("status"));
        String namespace = metadata.get("namespace") == null ? "default" : String.valueOf(metadata.get("namespace"));
        String name = namespace + "/" + metadata.get("name");
        List<ServePort> ports = new ArrayList<>();
        for (Object c : list(spec.get("containers"))) {
            for (Object p : list(map(c).get("ports"))) {
                Map<?, ?> port = map(p);
                if (port.get("containerPort") instanceof Number n) {
                    Object protocol = port.get("protocol");
                    ports.add(new ServePort(n.intValue(), protocol == null ? Protocol.TCP : Protocol.parse(protocol.toString())));
                }
            }
        }
        List<String> ips = new ArrayList<>();
        for (Object p : list(status.get("podIPs"))) {
            Object ip = map(p).get("ip");
            if (ip != null) {
                ips.add(ip.toString());
            }
        }
        if (ips.isEmpty() && status.get("podIP") != null) {
            ips.add(status.get("podIP").toString());
        }
        Object node = spec.get("nodeName");
        Object phase = status.get("phase");
        return new SandboxPod(name, node == null ? null : node.toString(), ips, ports,
                phase == null ? null : phase.toString(), Boolean.TRUE.equals(spec.get("hostNetwork")));
    }

    private static Map<?, ?> map(Object o) {
        return o instanceof Map<?, ?> m ? m : Map.of();
    }

    private static List<?> list(Object o) {
        return o instanceof List<?> l ? l : List.of();
    }
}
