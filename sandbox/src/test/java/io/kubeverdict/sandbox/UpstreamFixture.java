// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.util.Map;

/**
 * The upstream Netpol e2e fixture as manifests: namespaces x, y, z (label ns=NAME) with pods a, b, c
 * (label pod=NAME), each serving 80 and 81 on TCP, UDP and SCTP with named ports serve-80-tcp etc.
 * No nodes and no IPs: the sandbox places them.
 */
final class UpstreamFixture {
    static final String[] NAMESPACES = {"x", "y", "z"};
    static final String[] PODS = {"a", "b", "c"};

    private UpstreamFixture() {}

    static String manifests() {
        return manifests(Map.of());
    }

    /** extraLabels: "ns/pod" -> "key: value" lines added to that pod's labels. */
    static String manifests(Map<String, String> extraLabels) {
        StringBuilder s = new StringBuilder();
        for (String ns : NAMESPACES) {
            s.append("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ")
                    .append(ns)
                    .append("\n  labels:\n    ns: ")
                    .append(ns)
                    .append("\n    kubernetes.io/metadata.name: ")
                    .append(ns)
                    .append("\n---\n");
        }
        for (String ns : NAMESPACES) {
            for (String pod : PODS) {
                s.append("apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: ")
                        .append(ns)
                        .append("\n  name: ")
                        .append(pod)
                        .append("\n  labels:\n    pod: ")
                        .append(pod)
                        .append('\n');
                String extra = extraLabels.get(ns + "/" + pod);
                if (extra != null) {
                    s.append("    ").append(extra).append('\n');
                }
                s.append("spec:\n  containers:\n");
                for (int port : new int[] {80, 81}) {
                    for (String proto : new String[] {"TCP", "UDP", "SCTP"}) {
                        s.append("  - name: cont-")
                                .append(port)
                                .append('-')
                                .append(proto.toLowerCase())
                                .append(
                                        "\n    image: registry.k8s.io/e2e-test-images/agnhost:2.53\n    ports:\n    - containerPort: ")
                                .append(port)
                                .append("\n      name: serve-")
                                .append(port)
                                .append('-')
                                .append(proto.toLowerCase())
                                .append("\n      protocol: ")
                                .append(proto)
                                .append('\n');
                    }
                }
                s.append("---\n");
            }
        }
        return s.toString();
    }
}
