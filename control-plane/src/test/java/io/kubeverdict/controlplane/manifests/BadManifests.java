// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Manifest files that must each reject a whole load, with where the loader must say the problem
 * is. Shared by the loader, directory source, service and CLI tests.
 */
public final class BadManifests {
    /** Limits small enough for a test to exceed them. */
    public static final ParserLimits SMALL_LIMITS = new ParserLimits(100, 64 * 1024, 16 * 1024);

    /**
     * @param file    file name (relative to the directory)
     * @param content the bytes
     * @param where   the start of the error: "file:line:column"
     * @param says    a fragment of the error message
     */
    public record Case(String name, String file, byte[] content, String where, String says) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final String POLICY_HEAD = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: x, name: p}
            """;

    private BadManifests() {}

    private static Case text(String name, String file, String content, String where, String says) {
        return new Case(name, file, content.getBytes(StandardCharsets.UTF_8), where, says);
    }

    /** The cases that are bad under {@link ParserLimits#DEFAULT} too (all but the one over the small size limit). */
    public static List<Case> underDefaultLimits() {
        return all().stream().filter(c -> !c.file().equals("big.yaml")).toList();
    }

    public static List<Case> all() {
        byte[] notUtf8 = ("apiVersion: v1\nkind: Namespace\nmetadata: {name: x, labels: {a: \"b\u00e9")
                .getBytes(StandardCharsets.UTF_8);
        byte[] badUtf8 = new byte[notUtf8.length + 4];
        System.arraycopy(notUtf8, 0, badUtf8, 0, notUtf8.length);
        badUtf8[notUtf8.length] = (byte) 0xC3; // a lead byte followed by ASCII: not UTF-8
        badUtf8[notUtf8.length + 1] = '"';
        badUtf8[notUtf8.length + 2] = '}';
        badUtf8[notUtf8.length + 3] = '}';
        String deep = "a: " + "[".repeat(5000) + "]".repeat(5000) + "\n";
        String big = POLICY_HEAD + "spec: {podSelector: {}}\n---\n" + "# padding\n".repeat(7000);
        return List.of(
                new Case("bad UTF-8", "ns.yaml", badUtf8, "ns.yaml:3:36", "not UTF-8: byte 0xC3"),
                text(
                        "YAML syntax error",
                        "pol.yaml",
                        POLICY_HEAD + "spec: {podSelector: {}}\n---\nthis: is: not: yaml\n",
                        "pol.yaml:6:9",
                        "mapping values are not allowed"),
                text("tab indentation", "pol.yaml", POLICY_HEAD + "spec:\n\tpodSelector: {}\n", "pol.yaml:5:1", "TAB"),
                text(
                        "unterminated quote",
                        "pol.yaml",
                        POLICY_HEAD + "spec: {podSelector: {matchLabels: {app: \"web}}}\n",
                        "pol.yaml:5:1",
                        "while scanning a quoted scalar (started at line 4, column 41)"),
                text("trailing comma in JSON", "pol.json", """
                        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"namespace": "x", "name": "p"},
                         "spec": {"podSelector": {},}}
                        """, "pol.json:3:29", "JSON"),
                text(
                        "duplicate key",
                        "pol.yaml",
                        POLICY_HEAD + "spec:\n  podSelector: {}\n  podSelector: {matchLabels: {a: b}}\n",
                        "pol.yaml:6:3",
                        "Duplicate Object property \"podSelector\""),
                text("duplicate key in JSON", "pol.json", """
                        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "kind": "NetworkPolicy",
                         "metadata": {"namespace": "x", "name": "p"}, "spec": {"podSelector": {}}}
                        """, "pol.json:1:71", "Duplicate Object property \"kind\""),
                text("v1 List with one bad item", "list.yaml", """
                        apiVersion: v1
                        kind: List
                        items:
                        - apiVersion: networking.k8s.io/v1
                          kind: NetworkPolicy
                          metadata: {namespace: x, name: good}
                          spec: {podSelector: {}}
                        - apiVersion: networking.k8s.io/v1
                          kind: NetworkPolicy
                          metadata: {namespace: x, name: bad}
                          spec: {podSelector: {}, policyTypes: Ingress}
                        """, "list.yaml:11:27", "spec.policyTypes"),
                text(
                        "NetworkPolicyList with one bad item",
                        "list.yaml",
                        """
                        apiVersion: networking.k8s.io/v1
                        kind: NetworkPolicyList
                        items:
                        - metadata: {namespace: x, name: good}
                          spec: {podSelector: {}}
                        - metadata: {namespace: x}
                          spec: {podSelector: {}}
                        """,
                        "list.yaml:6:3",
                        "NetworkPolicy without metadata.name"),
                text(
                        "unreadable policy",
                        "pol.yaml",
                        POLICY_HEAD + """
                        spec:
                          podSelector: {}
                          ingress:
                          - ports: [{port: {nested: object}}]
                        """,
                        "pol.yaml:7:14",
                        "cannot read NetworkPolicy field spec.ingress[0].ports[0].port"),
                text(
                        "misspelt policy field",
                        "pol.yaml",
                        POLICY_HEAD + """
                        spec:
                          podSelector: {}
                          ingress:
                          - from: [{ipBlock: {cidr: 10.0.0.0/8, exept: [10.1.0.0/16]}}]
                        """,
                        "pol.yaml:7:41",
                        "spec.ingress[0].from[0].ipBlock.exept is unknown"),
                text("misspelt metadata field", "pod.yaml", """
                        apiVersion: v1
                        kind: Pod
                        metadata: {namespce: x, name: p}
                        """, "pod.yaml:3:12", "metadata.namespce is unknown"),
                text("policy without a name", "pol.yaml", """
                        apiVersion: networking.k8s.io/v1
                        kind: NetworkPolicy
                        metadata: {namespace: x}
                        spec: {podSelector: {}}
                        """, "pol.yaml:1:1", "without metadata.name"),
                text(
                        "not an object",
                        "pol.yaml",
                        POLICY_HEAD + "spec: {podSelector: {}}\n---\n- just\n- a list\n",
                        "pol.yaml:6:1",
                        "not a Kubernetes object"),
                text("document over the size limit", "big.yaml", big, "big.yaml:1:1", "more than the limit of 65536"),
                text(
                        "too deep nesting",
                        "deep.yaml",
                        deep,
                        "deep.yaml:1:104",
                        "nesting depth (101) exceeds the maximum allowed (100"),
                text("alias bomb", "bomb.yaml", """
                        apiVersion: v1
                        kind: Namespace
                        metadata:
                          name: x
                          labels: {a: &a lol}
                          annotations: {b: *a, c: *a}
                        """, "bomb.yaml:6:20", "alias *a"),
                // A typo in a policy's kind or apiVersion must not drop it (the namespace would open).
                text(
                        "misspelt policy kind",
                        "pol.yaml",
                        POLICY_HEAD.replace("kind: NetworkPolicy", "kind: NetworkPolicie")
                                + "spec: {podSelector: {}}\n",
                        "pol.yaml:1:1",
                        "\"NetworkPolicie\" is not a kind kube-verdict reads"),
                text(
                        "policy of apiVersion v1",
                        "pol.yaml",
                        POLICY_HEAD.replace("networking.k8s.io/v1", "v1") + "spec: {podSelector: {}}\n",
                        "pol.yaml:1:1",
                        "NetworkPolicy of apiVersion v1 is not read"),
                text(
                        "unknown kind in the admin policy group",
                        "pol.yaml",
                        """
                        apiVersion: policy.networking.k8s.io/v1alpha1
                        kind: AdminNetworkPolicyRule
                        metadata: {name: p}
                        """,
                        "pol.yaml:1:1",
                        "policy.networking.k8s.io/v1alpha1 AdminNetworkPolicyRule is not read"));
    }
}
