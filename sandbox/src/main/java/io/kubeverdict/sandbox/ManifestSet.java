// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * A directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively; several documents per
 * file, kind List too) read with fabric8's typed model: the sandbox takes its Pods and Nodes and writes a
 * copy in which every placed Pod has the node and IPs of a {@link Placement}, so the control
 * plane, the agents and the in-process engine all see the same pods.
 *
 * <p>The copy keeps every file name and every document in place (documents are split like the
 * manifest loader splits them, so "file document N" in a problem the control plane reports on the
 * copy is the same document of the source). Only documents holding a placed Pod or a Node that
 * the sandbox gives a pod range are rewritten (Nodes without any object get one in {@link #GENERATED_NODES});
 * the rest, unreadable ones included, are copied as written, so the control plane judges them
 * exactly as it would the source.
 */
public final class ManifestSet {
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    /** The file of the copy that holds the Node objects the sandbox makes (for nodes the manifests have none of). */
    public static final String GENERATED_NODES = "kube-verdict-sandbox-nodes.yaml";

    /** One document: its text as written and what fabric8 read from it (null when unreadable). */
    private record Document(String text, Object parsed) {}

    /** One file as written and its documents. */
    private record ManifestFile(String text, List<Document> documents) {}

    private final Map<Path, ManifestFile> files;
    private final Map<String, Pod> pods;
    private final Map<String, Node> nodes;

    private ManifestSet(Map<Path, ManifestFile> files, Map<String, Pod> pods, Map<String, Node> nodes) {
        this.files = files;
        this.pods = pods;
        this.nodes = nodes;
    }

    static boolean isManifest(Path file) {
        String name = file.getFileName().toString();
        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json"));
    }

    public static ManifestSet load(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("manifest directory " + dir + " does not exist");
        }
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(dir)) {
            paths = walk.filter(Files::isRegularFile)
                    .filter(ManifestSet::isManifest)
                    .sorted()
                    .toList();
        }
        Map<Path, ManifestFile> files = new LinkedHashMap<>();
        // Later definitions replace earlier ones, in path order, as in the manifest loader.
        Map<String, Pod> pods = new TreeMap<>();
        Map<String, Node> nodes = new TreeMap<>();
        for (Path path : paths) {
            Path relative = dir.relativize(path);
            List<Document> documents = new ArrayList<>();
            String text = Files.readString(path, StandardCharsets.UTF_8);
            List<String> texts = ManifestLoader.splitDocuments(text);
            for (int i = 0; i < texts.size(); i++) {
                Object parsed = parse(texts.get(i));
                documents.add(new Document(texts.get(i), parsed));
                for (Node node : nodesOf(parsed)) {
                    nodes.put(node.getMetadata().getName(), node);
                }
                for (Pod pod : podsOf(parsed)) {
                    try {
                        pods.put(SandboxPod.of(pod).name(), pod);
                    } catch (IllegalArgumentException e) {
                        throw new SandboxException(relative + " document " + (i + 1) + ": " + e.getMessage());
                    }
                }
            }
            files.put(relative, new ManifestFile(text, documents));
        }
        return new ManifestSet(files, pods, nodes);
    }

    /** What fabric8 reads from a document, or null: the loader reports unreadable documents. */
    private static Object parse(String text) {
        try {
            return SERIALIZATION.unmarshal(text);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The objects of a document: a List's items, else the document's object. */
    private static List<Object> objectsOf(Object parsed) {
        List<Object> objects = new ArrayList<>();
        if (parsed instanceof KubernetesList list && list.getItems() != null) {
            objects.addAll(list.getItems());
        } else {
            objects.add(parsed);
        }
        return objects;
    }

    /** The named Nodes of a document (a List's items too). */
    private static List<Node> nodesOf(Object parsed) {
        List<Node> out = new ArrayList<>();
        for (Object o : objectsOf(parsed)) {
            if (o instanceof Node node
                    && node.getMetadata() != null
                    && node.getMetadata().getName() != null
                    && !node.getMetadata().getName().isEmpty()) {
                out.add(node);
            }
        }
        return out;
    }

    /** The named Pods of a document (a List's items too), namespace defaulted like the loader does. */
    private static List<Pod> podsOf(Object parsed) {
        List<Pod> out = new ArrayList<>();
        for (Object o : objectsOf(parsed)) {
            if (o instanceof Pod pod
                    && pod.getMetadata() != null
                    && pod.getMetadata().getName() != null
                    && !pod.getMetadata().getName().isEmpty()) {
                if (pod.getMetadata().getNamespace() == null
                        || pod.getMetadata().getNamespace().isEmpty()) {
                    pod.getMetadata().setNamespace("default");
                }
                out.add(pod);
            }
        }
        return out;
    }

    /** Every Pod, by "namespace/name"; not to be changed (writeAssigned works on copies). */
    public List<Pod> pods() {
        return List.copyOf(pods.values());
    }

    /** Every Node object, by name: they define the sandbox's nodes and their addresses. */
    public List<Node> nodes() {
        return List.copyOf(nodes.values());
    }

    /** The sandbox's view of every Pod, in name order. */
    public List<SandboxPod> sandboxPods() {
        return pods.values().stream().map(SandboxPod::of).toList();
    }

    /**
     * Writes every manifest into dir with the placement applied to the pods (node, IPs, phase
     * Running) and to the nodes (the pod ranges it generates: into their Node objects, else into
     * Node objects of {@link #GENERATED_NODES}), each file replaced atomically so a directory watcher never reads half a file; files
     * of dir that are no longer manifests here are removed.
     */
    public void writeAssigned(Placement placement, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        for (Map.Entry<Path, ManifestFile> e : files.entrySet()) {
            written.add(writeIfChanged(dir.resolve(e.getKey()), render(e.getKey(), e.getValue(), placement)));
        }
        String generatedNodes = generatedNodes(placement);
        if (!generatedNodes.isEmpty()) {
            if (files.containsKey(Path.of(GENERATED_NODES))) {
                throw new SandboxException("the manifests have a file " + GENERATED_NODES
                        + ", where the sandbox writes the Node objects of nodes that have none");
            }
            written.add(writeIfChanged(dir.resolve(GENERATED_NODES), generatedNodes));
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path stale : walk.filter(Files::isRegularFile)
                    .filter(ManifestSet::isManifest)
                    .filter(f -> !written.contains(f))
                    .toList()) {
                Files.delete(stale);
            }
        }
    }

    /** Writes content to target atomically, unless it holds that already (no event for the watcher); returns target. */
    private static Path writeIfChanged(Path target, String text) throws IOException {
        Files.createDirectories(target.getParent());
        byte[] content = text.getBytes(StandardCharsets.UTF_8);
        // Compared as bytes: what is there may not even be UTF-8 (a fault test wrote it).
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), content)) {
            return target;
        }
        Path temp = target.resolveSibling("." + target.getFileName() + ".tmp");
        Files.write(temp, content);
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return target;
    }

    /**
     * A Node object for every node that the placement gives a pod range and the manifests give no
     * Node object: its name and spec.podCIDRs only (no labels, no addresses, so no {@code nodes}
     * peer selects anything more than without it). Empty when there is none.
     */
    private String generatedNodes(Placement placement) {
        StringBuilder out = new StringBuilder();
        placement.podRanges().generated().forEach((name, ranges) -> {
            if (!nodes.containsKey(name)) {
                Node node = new Node();
                node.setApiVersion("v1");
                node.setKind("Node");
                node.setMetadata(new ObjectMeta());
                node.getMetadata().setName(name);
                node.setSpec(new NodeSpec());
                setPodCidrs(node, ranges);
                out.append(SERIALIZATION.asYaml(node)); // starts with "---"
            }
        });
        return out.toString();
    }

    private static void setPodCidrs(Node node, List<String> ranges) {
        if (node.getSpec() == null) {
            node.setSpec(new NodeSpec());
        }
        node.getSpec().setPodCIDR(ranges.get(0));
        node.getSpec().setPodCIDRs(ranges);
    }

    /**
     * A file as written when it holds no placed pod and no Node given a range; else its documents,
     * those with placed pods or such Nodes re-serialized (as JSON when the file is one JSON document).
     */
    private static String render(Path file, ManifestFile manifest, Placement placement) {
        List<Object> placed = manifest.documents().stream()
                .map(d -> placed(d.parsed(), placement))
                .toList();
        if (placed.stream().allMatch(java.util.Objects::isNull)) {
            return manifest.text();
        }
        if (file.getFileName().toString().endsWith(".json") && placed.size() == 1) {
            return SERIALIZATION.asJson(placed.get(0)) + "\n";
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < placed.size(); i++) {
            if (placed.get(i) == null) {
                out.append("---\n").append(manifest.documents().get(i).text());
            } else {
                out.append(SERIALIZATION.asYaml(placed.get(i))); // starts with "---"
            }
        }
        return out.toString();
    }

    /**
     * A copy of the document's object with its placed pods placed and its Nodes given the pod
     * ranges the placement generates, or null when it has neither.
     */
    private static Object placed(Object parsed, Placement placement) {
        Map<String, List<String>> generated = placement.podRanges().generated();
        if (parsed == null
                || (podsOf(parsed).stream()
                                .noneMatch(p -> placement
                                        .nodeOf()
                                        .containsKey(SandboxPod.of(p).name()))
                        && nodesOf(parsed).stream()
                                .noneMatch(n ->
                                        generated.containsKey(n.getMetadata().getName())))) {
            return null;
        }
        Object copy = SERIALIZATION.clone(parsed);
        for (Node node : nodesOf(copy)) {
            List<String> ranges = generated.get(node.getMetadata().getName());
            if (ranges != null) {
                setPodCidrs(node, ranges);
            }
        }
        for (Pod pod : podsOf(copy)) {
            String name = SandboxPod.of(pod).name();
            if (!placement.nodeOf().containsKey(name)) {
                continue;
            }
            if (pod.getSpec() == null) {
                pod.setSpec(new PodSpec());
            }
            pod.getSpec().setNodeName(placement.nodeOf().get(name));
            if (pod.getStatus() == null) {
                pod.setStatus(new PodStatus());
            }
            List<String> ips = placement.ipsOf().get(name);
            // A Pending pod stays Pending: it is an endpoint as it is, and the run should show that.
            if (pod.getStatus().getPhase() == null || pod.getStatus().getPhase().isEmpty()) {
                pod.getStatus().setPhase("Running");
            }
            pod.getStatus().setPodIP(ips.get(0));
            pod.getStatus().setPodIPs(ips.stream().map(PodIP::new).toList());
        }
        return copy;
    }
}
