// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The benchmark's cluster: node-1 with its pod range ({@value #POD_RANGE}, spec.podCIDRs, so the
 * agent's pod address guard is on as on a real node), namespace "bench", pods client, server and
 * other on node-1 inside that range, and one policy file whose content decides whether the client
 * and server are selected.
 */
final class Manifests {
    static final String CLIENT = "bench/client";
    static final String SERVER = "bench/server";
    static final String OTHER = "bench/other";
    static final int ECHO_PORT = 8080;
    /** node-1's spec.podCIDRs: the snapshot's pod_cidrs, the agent's guard4 set. */
    static final String POD_RANGE = "10.244.0.0/24";

    /** The pods' addresses (all in {@link #POD_RANGE}), by name: the endpoints the guard knows. */
    static final String[][] PODS = {{"client", "10.244.0.10"}, {"server", "10.244.0.11"}, {"other", "10.244.0.12"}};

    private Manifests() {}

    static void writePods(Path dir) throws IOException {
        Files.createDirectories(dir);
        StringBuilder s = new StringBuilder(
                "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nspec: {podCIDRs: [" + POD_RANGE
                        + "]}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench\n  labels: {ns: bench}\n");
        for (String[] p : PODS) {
            s.append("---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: bench\n  name: ")
                    .append(p[0])
                    .append("\n  labels: {app: ")
                    .append(p[0])
                    .append("}\nspec:\n  nodeName: node-1\n  containers:\n")
                    .append(
                            "    - name: c\n      image: none\n      ports:\n        - {containerPort: 80, protocol: TCP}\n")
                    .append("status:\n  phase: Running\n  podIP: ")
                    .append(p[1])
                    .append("\n  podIPs:\n    - ip: ")
                    .append(p[1])
                    .append('\n');
        }
        Files.writeString(dir.resolve("pods.yaml"), s);
    }

    /** (b): a policy that selects only the other pod; (c): policies selecting client (egress) and server (ingress), allowing the echo port. */
    static void writePolicy(Path dir, boolean selectClientAndServer) throws IOException {
        String policy = selectClientAndServer
                ? "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {namespace: bench, name: server-from-client}\n"
                        + "spec:\n  podSelector: {matchLabels: {app: server}}\n  policyTypes: [Ingress]\n  ingress:\n"
                        + "    - from: [{podSelector: {matchLabels: {app: client}}}]\n      ports: [{protocol: TCP, port: "
                        + ECHO_PORT + "}]\n"
                        + "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {namespace: bench, name: client-to-server}\n"
                        + "spec:\n  podSelector: {matchLabels: {app: client}}\n  policyTypes: [Egress]\n  egress:\n"
                        + "    - to: [{podSelector: {matchLabels: {app: server}}}]\n      ports: [{protocol: TCP, port: "
                        + ECHO_PORT + "}]\n"
                : "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {namespace: bench, name: isolate-other}\n"
                        + "spec:\n  podSelector: {matchLabels: {app: other}}\n  policyTypes: [Ingress]\n";
        // atomically, so the sandbox never reads half a file
        Path tmp = dir.resolve(".policy.yaml.tmp");
        Files.writeString(tmp, policy);
        Files.move(
                tmp, dir.resolve("policy.yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
