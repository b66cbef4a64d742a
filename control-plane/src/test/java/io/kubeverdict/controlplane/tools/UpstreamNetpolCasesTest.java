// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import static io.kubeverdict.controlplane.fixtures.NetpolWorld.PODS;
import static io.kubeverdict.controlplane.fixtures.NetpolWorld.ip;
import static io.kubeverdict.proto.v1.Protocol.SCTP;
import static io.kubeverdict.proto.v1.Protocol.TCP;
import static io.kubeverdict.proto.v1.Protocol.UDP;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.NetpolWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The upstream Kubernetes e2e Netpol suite (test/e2e/network/netpol), reconstructed as a table:
 * each case is a sequence of steps (create/update/delete a policy, relabel a pod or namespace)
 * with the expected connectivity matrix after each step, in the suite's own vocabulary
 * (ExpectAllIngress, ExpectAllEgress, Expect, loopback always allowed). Evaluation goes through
 * the incremental calculator, per-node snapshots and SnapshotIndex — the enforcement path —
 * and after every step the incremental snapshots must equal a from-scratch calculation.
 */
class UpstreamNetpolCasesTest {

    // ---- the table ----

    static Stream<Case> cases() {
        String xb = ip("x/b");
        String yb = ip("y/b");
        return Stream.of(
                c(
                        "should support a 'default-deny-ingress' policy",
                        step(put("x", """
                    metadata: {name: deny-ingress}
                    spec: {podSelector: {}, policyTypes: [Ingress]}
                    """), probe(TCP, 80, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should support a 'default-deny-all' policy",
                        step(
                                put("x", """
                    metadata: {name: deny-all}
                    spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(any(), ns("x"), false).peers(ns("x"), any(), false)))),
                c(
                        "should enforce policy to allow traffic from pods within server namespace based on PodSelector",
                        step(
                                put("x", """
                    metadata: {name: x-a-from-b}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).set("x/b", "x/a", true)))),
                c(
                        "should enforce policy to allow ingress traffic for a target",
                        step(put("x", """
                    metadata: {name: deny-ingress}
                    spec: {podSelector: {}, policyTypes: [Ingress]}
                    """), probe(TCP, 80, r -> r.peers(any(), ns("x"), false))),
                        step(
                                put("x", """
                    metadata: {name: allow-all-to-a}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{}]
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(any(), ns("x"), false).ingress("x/a", true)))),
                c(
                        "should enforce policy to allow ingress traffic from pods in all namespaces",
                        step(put("x", """
                    metadata: {name: from-all-ns}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {}}]}]
                    """), probe(TCP, 80, r -> {}))),
                c(
                        "should enforce policy to allow traffic only from a different namespace, based on NamespaceSelector",
                        step(
                                put("x", """
                    metadata: {name: from-ns-y}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce policy based on PodSelector with MatchExpressions",
                        step(
                                put("x", """
                    metadata: {name: pod-in-b}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{podSelector: {matchExpressions: [{key: pod, operator: In, values: [b]}]}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).set("x/b", "x/a", true)))),
                c(
                        "should enforce policy based on NamespaceSelector with MatchExpressions",
                        step(
                                put("x", """
                    metadata: {name: ns-in-y}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: ns, operator: In, values: [y]}]}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce policy based on PodSelector or NamespaceSelector",
                        step(
                                put("x", """
                    metadata: {name: pod-or-ns}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress:
                      - from:
                        - namespaceSelector: {matchExpressions: [{key: ns, operator: NotIn, values: [x]}]}
                        - podSelector: {matchLabels: {pod: b}}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.ingress("x/a", false)
                                                .peers(ns("y").or(ns("z")), is("x/a"), true)
                                                .set("x/b", "x/a", true)))),
                c(
                        "should enforce policy based on PodSelector and NamespaceSelector",
                        step(
                                put("x", """
                    metadata: {name: pod-and-ns}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress:
                      - from:
                        - namespaceSelector: {matchExpressions: [{key: ns, operator: NotIn, values: [x]}]}
                          podSelector: {matchLabels: {pod: b}}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.ingress("x/a", false)
                                                .set("y/b", "x/a", true)
                                                .set("z/b", "x/a", true)))),
                c(
                        "should enforce policy based on Multiple PodSelectors and NamespaceSelectors",
                        step(
                                put("x", """
                    metadata: {name: pods-and-ns}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress:
                      - from:
                        - namespaceSelector: {matchExpressions: [{key: ns, operator: NotIn, values: [x]}]}
                          podSelector: {matchExpressions: [{key: pod, operator: In, values: [b, c]}]}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.ingress("x/a", false)
                                                .set("y/b", "x/a", true)
                                                .set("z/b", "x/a", true)
                                                .set("y/c", "x/a", true)
                                                .set("z/c", "x/a", true)))),
                c(
                        "should enforce policy based on any PodSelectors",
                        step(
                                put("x", """
                    metadata: {name: any-pods}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}, {podSelector: {matchLabels: {pod: c}}}]}]
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.ingress("x/a", false)
                                                .set("x/b", "x/a", true)
                                                .set("x/c", "x/a", true)))),
                c(
                        "should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector",
                        step(
                                put("x", """
                    metadata: {name: ya-only}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}, podSelector: {matchLabels: {pod: a}}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).set("y/a", "x/a", true)))),
                c(
                        "should enforce policy based on Ports",
                        step(
                                put("x", """
                    metadata: {name: ns-y-port-81}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 81, protocol: TCP}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false)),
                                probe(TCP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce multiple, stacked policies with overlapping podSelectors",
                        step(
                                put("x", """
                    metadata: {name: ns-y-port-81}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 81}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false)),
                                probe(TCP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true))),
                        step(
                                put("x", """
                    metadata: {name: ns-y-port-80}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 80}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)),
                                probe(TCP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should support allow-all policy",
                        step(put("x", """
                    metadata: {name: allow-all}
                    spec: {podSelector: {}, ingress: [{}]}
                    """), probe(TCP, 80, r -> {}), probe(TCP, 81, r -> {}))),
                c(
                        "should allow ingress access on one named port",
                        step(
                                put("x", """
                    metadata: {name: named-81}
                    spec: {podSelector: {}, ingress: [{ports: [{port: serve-81-tcp}]}]}
                    """),
                                probe(TCP, 81, r -> {}),
                                probe(TCP, 80, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should allow ingress access from namespace on one named port",
                        step(
                                put("x", """
                    metadata: {name: ns-y-named-80}
                    spec:
                      podSelector: {}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: serve-80-tcp}]}]
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(any(), ns("x"), false).peers(ns("y"), ns("x"), true)),
                                probe(TCP, 81, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should allow egress access on one named port",
                        step(
                                put("x", """
                    metadata: {name: egress-named-80}
                    spec: {podSelector: {}, policyTypes: [Egress], egress: [{ports: [{port: serve-80-tcp}]}]}
                    """),
                                probe(TCP, 80, r -> {}),
                                probe(TCP, 81, r -> r.peers(ns("x"), any(), false)))),
                c(
                        "should enforce updated policy",
                        step(put("x", """
                    metadata: {name: port-policy}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{port: 81}]}]}
                    """), probe(TCP, 81, r -> {}), probe(TCP, 80, r -> r.ingress("x/a", false))),
                        step(put("x", """
                    metadata: {name: port-policy}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{port: 80}]}]}
                    """), probe(TCP, 80, r -> {}), probe(TCP, 81, r -> r.ingress("x/a", false)))),
                c(
                        "should allow ingress access from updated namespace",
                        step(put("x", """
                    metadata: {name: from-updated-ns}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns2: updated}}}]}]
                    """), probe(TCP, 80, r -> r.ingress("x/a", false))),
                        step(
                                w -> w.labelNamespace("y", "ns2", "updated"),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true))),
                        step(w -> w.labelNamespace("y", "ns2", null), probe(TCP, 80, r -> r.ingress("x/a", false)))),
                c(
                        "should allow ingress access from updated pod",
                        step(put("x", """
                    metadata: {name: from-updated-pod}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{podSelector: {matchLabels: {pod: b, pod2: updated}}}]}]
                    """), probe(TCP, 80, r -> r.ingress("x/a", false))),
                        step(
                                w -> w.labelPod("x/b", "pod2", "updated"),
                                probe(TCP, 80, r -> r.ingress("x/a", false).set("x/b", "x/a", true)))),
                c(
                        "should deny ingress from pods on other namespaces",
                        step(put("x", """
                    metadata: {name: same-ns-only}
                    spec: {podSelector: {}, ingress: [{from: [{podSelector: {}}]}]}
                    """), probe(TCP, 80, r -> r.peers(ns("y").or(ns("z")), ns("x"), false)))),
                c(
                        "should deny ingress access to updated pod",
                        step(put("x", """
                    metadata: {name: deny-isolated}
                    spec: {podSelector: {matchLabels: {target: isolated}}, policyTypes: [Ingress]}
                    """), probe(TCP, 80, r -> {})),
                        step(
                                w -> w.labelPod("x/a", "target", "isolated"),
                                probe(TCP, 80, r -> r.ingress("x/a", false))),
                        step(w -> w.labelPod("x/a", "target", null), probe(TCP, 80, r -> {}))),
                c(
                        "should deny egress from pods based on PodSelector",
                        step(put("x", """
                    metadata: {name: deny-egress-a}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress]}
                    """), probe(TCP, 80, r -> r.egress("x/a", false)))),
                c(
                        "should deny egress from all pods in a namespace",
                        step(
                                put("x", """
                    metadata: {name: deny-egress}
                    spec: {podSelector: {}, policyTypes: [Egress]}
                    """),
                                probe(TCP, 80, r -> r.peers(ns("x"), any(), false)),
                                probe(UDP, 81, r -> r.peers(ns("x"), any(), false)))),
                c(
                        "should work with Ingress, Egress specified together",
                        step(
                                put("x", """
                    metadata: {name: both}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Ingress, Egress]
                      ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]
                      egress: [{ports: [{port: 80}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).set("x/b", "x/a", true)),
                                probe(
                                        TCP,
                                        81,
                                        r -> r.ingress("x/a", false)
                                                .set("x/b", "x/a", true)
                                                .egress("x/a", false)))),
                c(
                        "should support denying of egress traffic on the client side (even if the server explicitly allows this traffic)",
                        step(
                                put("x", """
                    metadata: {name: a-to-y-only}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress: [{to: [{namespaceSelector: {matchLabels: {ns: y}}}]}]
                    """),
                                probe(TCP, 80, r -> r.egress("x/a", false).peers(is("x/a"), ns("y"), true))),
                        step(
                                put("z", """
                    metadata: {name: z-from-xa}
                    spec:
                      podSelector: {}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: x}}, podSelector: {matchLabels: {pod: a}}}]}]
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.egress("x/a", false)
                                                .peers(is("x/a"), ns("y"), true)
                                                .peers(any(), ns("z"), false)))),
                c(
                        "should enforce egress policy allowing traffic to a server in a different namespace based on PodSelector and NamespaceSelector",
                        step(
                                put("x", """
                    metadata: {name: a-to-ya}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress: [{to: [{namespaceSelector: {matchLabels: {ns: y}}, podSelector: {matchLabels: {pod: a}}}]}]
                    """),
                                probe(TCP, 80, r -> r.egress("x/a", false).set("x/a", "y/a", true)))),
                c(
                        "should enforce ingress policy allowing any port traffic to a server on a specific protocol",
                        step(
                                put("x", """
                    metadata: {name: any-tcp}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{protocol: TCP}]}]}
                    """),
                                probe(TCP, 80, r -> {}),
                                probe(TCP, 81, r -> {}),
                                probe(UDP, 80, r -> r.ingress("x/a", false)))),
                c(
                        "should enforce multiple ingress policies with ingress allow-all policy taking precedence",
                        step(put("x", """
                    metadata: {name: only-80}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{port: 80}]}]}
                    """), probe(TCP, 81, r -> r.ingress("x/a", false)), probe(TCP, 80, r -> {})),
                        step(put("x", """
                    metadata: {name: allow-all}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{}]}
                    """), probe(TCP, 81, r -> {}), probe(TCP, 80, r -> {}))),
                c(
                        "should enforce multiple egress policies with egress allow-all policy taking precedence",
                        step(put("x", """
                    metadata: {name: only-80}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress], egress: [{ports: [{port: 80}]}]}
                    """), probe(TCP, 81, r -> r.egress("x/a", false)), probe(TCP, 80, r -> {})),
                        step(put("x", """
                    metadata: {name: allow-all}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress], egress: [{}]}
                    """), probe(TCP, 81, r -> {}), probe(TCP, 80, r -> {}))),
                c(
                        "should stop enforcing policies after they are deleted",
                        step(
                                put("x", """
                    metadata: {name: deny-all}
                    spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(any(), ns("x"), false).peers(ns("x"), any(), false))),
                        step(w -> w.deletePolicy("x", "deny-all"), probe(TCP, 80, r -> {}))),
                c(
                        "should allow egress access to server in CIDR block",
                        step(
                                put("x", """
                    metadata: {name: a-to-cidr}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress: [{to: [{ipBlock: {cidr: %s/32}}]}]
                    """.formatted(yb)),
                                probe(TCP, 80, r -> r.egress("x/a", false).set("x/a", "y/b", true)))),
                c(
                        "should enforce except clause while egress access to server in CIDR block",
                        step(put("x", """
                    metadata: {name: a-to-cidr-except}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress: [{to: [{ipBlock: {cidr: %s/4, except: [%s/32]}}]}]
                    """.formatted(xb, xb)), probe(TCP, 80, r -> r.set("x/a", "x/b", false)))),
                c(
                        "should ensure an IP overlapping both IPBlock.CIDR and IPBlock.Except is allowed",
                        step(put("x", """
                    metadata: {name: a-to-cidr-except}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress: [{to: [{ipBlock: {cidr: %s/4, except: [%s/32]}}]}]
                    """.formatted(xb, xb)), probe(TCP, 80, r -> r.set("x/a", "x/b", false))),
                        step(put("x", """
                    metadata: {name: a-to-cidr-except}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      policyTypes: [Egress]
                      egress:
                      - to: [{ipBlock: {cidr: %s/4, except: [%s/32]}}]
                      - to: [{ipBlock: {cidr: %s/32}}]
                    """.formatted(xb, xb, xb)), probe(TCP, 80, r -> {}))),
                c(
                        "should enforce policies to check ingress and egress policies can be controlled independently based on PodSelector",
                        step(put("x", """
                    metadata: {name: allow-egress-a}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress], egress: [{}]}
                    """), probe(TCP, 80, r -> {})),
                        step(put("x", """
                    metadata: {name: deny-ingress-a}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress]}
                    """), probe(TCP, 80, r -> r.ingress("x/a", false)))),
                c(
                        "should not mistakenly treat 'protocol: SCTP' as 'protocol: TCP', even if the plugin doesn't support SCTP",
                        step(put("x", """
                    metadata: {name: sctp-80}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{protocol: SCTP, port: 80}]}]}
                    """), probe(TCP, 80, r -> r.ingress("x/a", false)), probe(SCTP, 80, r -> {}))),
                c(
                        "should properly isolate pods that are selected by a policy allowing SCTP, even if the plugin doesn't support SCTP",
                        step(
                                put("x", """
                    metadata: {name: sctp-81}
                    spec: {podSelector: {}, ingress: [{ports: [{protocol: SCTP, port: 81}]}]}
                    """),
                                probe(TCP, 81, r -> r.peers(any(), ns("x"), false)),
                                probe(SCTP, 81, r -> {}),
                                probe(SCTP, 80, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should not allow access by TCP when a policy specifies only UDP",
                        step(put("x", """
                    metadata: {name: udp-81}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{protocol: UDP, port: 81}]}]}
                    """), probe(TCP, 81, r -> r.ingress("x/a", false)), probe(UDP, 81, r -> {}))),
                c(
                        "should enforce policy to allow traffic based on NamespaceSelector with MatchLabels using default ns label",
                        step(
                                put("x", """
                    metadata: {name: default-ns-label}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: y}}}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce policy based on NamespaceSelector with MatchExpressions using default ns label",
                        step(
                                put("x", """
                    metadata: {name: default-ns-label-expr}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [x]}]}}]}]
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.ingress("x/a", false).peers(ns("y").or(ns("z")), is("x/a"), true)))),
                c(
                        "should enforce policy based on Ports range with endPort",
                        step(
                                put("x", """
                    metadata: {name: range}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 80, endPort: 81}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)),
                                probe(TCP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)),
                                probe(TCP, 82, r -> r.ingress("x/a", false)))),
                c(
                        "should support multiple port ranges with endPort and protocols",
                        step(
                                put("x", """
                    metadata: {name: ranges}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{ports: [{port: 81, endPort: 82}, {port: 70, endPort: 80, protocol: UDP}]}]
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false)),
                                probe(TCP, 81, r -> {}),
                                probe(UDP, 80, r -> {}),
                                probe(UDP, 81, r -> r.ingress("x/a", false)))),
                c(
                        "should support a 'default-deny-ingress' policy [Feature:UDP]",
                        step(put("x", """
                    metadata: {name: deny-ingress}
                    spec: {podSelector: {}, policyTypes: [Ingress]}
                    """), probe(UDP, 80, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should enforce policy based on Ports [Feature:UDP]",
                        step(
                                put("x", """
                    metadata: {name: udp-81-from-y}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 81, protocol: UDP}]}]
                    """),
                                probe(UDP, 80, r -> r.ingress("x/a", false)),
                                probe(UDP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector [Feature:UDP]",
                        step(
                                put("x", """
                    metadata: {name: ya-udp}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}, podSelector: {matchLabels: {pod: a}}}], ports: [{port: 80, protocol: UDP}]}]
                    """),
                                probe(UDP, 80, r -> r.ingress("x/a", false).set("y/a", "x/a", true)))),
                c(
                        "should support a 'default-deny-ingress' policy [Feature:SCTP]",
                        step(put("x", """
                    metadata: {name: deny-ingress}
                    spec: {podSelector: {}, policyTypes: [Ingress]}
                    """), probe(SCTP, 80, r -> r.peers(any(), ns("x"), false)))),
                c(
                        "should enforce policy based on Ports [Feature:SCTP]",
                        step(
                                put("x", """
                    metadata: {name: sctp-81-from-y}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{port: 81, protocol: SCTP}]}]
                    """),
                                probe(SCTP, 80, r -> r.ingress("x/a", false)),
                                probe(SCTP, 81, r -> r.ingress("x/a", false).peers(ns("y"), is("x/a"), true)))),
                c(
                        "should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector [Feature:SCTP]",
                        step(
                                put("x", """
                    metadata: {name: ya-sctp}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}, podSelector: {matchLabels: {pod: a}}}], ports: [{port: 80, protocol: SCTP}]}]
                    """),
                                probe(SCTP, 80, r -> r.ingress("x/a", false).set("y/a", "x/a", true)))),
                c(
                        "should allow egress access to a named port only on pods that declare it",
                        step(put("x", """
                    metadata: {name: egress-named-81-udp}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress], egress: [{ports: [{port: serve-81-udp, protocol: UDP}]}]}
                    """), probe(UDP, 81, r -> {}), probe(UDP, 80, r -> r.egress("x/a", false))),
                        step(
                                w -> w.replacePodPorts("y/b", 80, "UDP", "serve-81-udp"),
                                probe(UDP, 81, r -> r.set("x/a", "y/b", false)),
                                probe(UDP, 80, r -> r.egress("x/a", false).set("x/a", "y/b", true)))),
                c(
                        "should not match a named port whose protocol differs from the rule's",
                        step(
                                put("x", """
                    metadata: {name: named-wrong-proto}
                    spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{port: serve-80-tcp, protocol: UDP}]}]}
                    """),
                                probe(UDP, 80, r -> r.ingress("x/a", false)),
                                probe(TCP, 80, r -> r.ingress("x/a", false)))),
                c(
                        "should keep isolation when a selected pod's label changes away and back",
                        step(
                                put("x", """
                    metadata: {name: deny-a}
                    spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress, Egress]}
                    """),
                                probe(TCP, 80, r -> r.ingress("x/a", false).egress("x/a", false))),
                        step(w -> w.labelPod("x/a", "pod", "z"), probe(TCP, 80, r -> {})),
                        step(
                                w -> w.labelPod("x/a", "pod", "a"),
                                probe(TCP, 80, r -> r.ingress("x/a", false).egress("x/a", false)))),
                c(
                        "should isolate ingress too when policyTypes is omitted, even with only egress rules",
                        step(put("x", """
                    metadata: {name: egress-rules-only}
                    spec: {podSelector: {matchLabels: {pod: a}}, egress: [{}]}
                    """), probe(TCP, 80, r -> r.ingress("x/a", false)))),
                c(
                        "should apply a namespace-selected egress policy after the namespace label changes",
                        step(put("x", """
                    metadata: {name: to-team-blue}
                    spec:
                      podSelector: {}
                      policyTypes: [Egress]
                      egress: [{to: [{namespaceSelector: {matchLabels: {team: blue}}}]}]
                    """), probe(TCP, 80, r -> r.peers(ns("x"), any(), false))),
                        step(
                                w -> w.labelNamespace("z", "team", "blue"),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("x"), any(), false).peers(ns("x"), ns("z"), true))),
                        step(
                                w -> w.labelNamespace("z", "team", "red"),
                                probe(TCP, 80, r -> r.peers(ns("x"), any(), false)))));
    }

    // ---- the runner ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void upstreamCase(Case c) {
        World w = new World();
        int stepNo = 0;
        for (Step s : c.steps()) {
            stepNo++;
            s.change().accept(w);
            OfflineCluster cluster = new OfflineCluster(w.calc, w.pods.values());
            for (Probe p : s.probes()) {
                Reach expected = new Reach();
                p.expect().accept(expected);
                ConnectivityMatrix m = ConnectivityMatrix.of(cluster, p.protocol(), p.port());
                Reach observed = Reach.of(m);
                assertThat(observed.table(p))
                        .as("step %d, %s/%d: observed (left) vs expected", stepNo, p.protocol(), p.port())
                        .isEqualTo(expected.table(p));
            }
            w.assertSameAsFromScratch();
        }
    }

    // ---- DSL ----

    record Probe(Protocol protocol, int port, Consumer<Reach> expect) {}

    record Step(Consumer<World> change, List<Probe> probes) {}

    record Case(String name, List<Step> steps) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case c(String name, Step... steps) {
        return new Case(name, List.of(steps));
    }

    static Step step(Consumer<World> change, Probe... probes) {
        return new Step(change, List.of(probes));
    }

    static Probe probe(Protocol proto, int port, Consumer<Reach> expect) {
        return new Probe(proto, port, expect);
    }

    static Consumer<World> put(String ns, String yaml) {
        return w -> w.put(Objects.policy(ns, yaml));
    }

    static Predicate<String> any() {
        return p -> true;
    }

    static Predicate<String> ns(String ns) {
        return p -> p.startsWith(ns + "/");
    }

    static Predicate<String> is(String pod) {
        return pod::equals;
    }

    /** Expected connectivity: everything allowed unless said otherwise; loopback always allowed. */
    static final class Reach {
        final Map<String, Map<String, Boolean>> m = new LinkedHashMap<>();

        Reach() {
            for (String f : PODS) {
                Map<String, Boolean> row = new LinkedHashMap<>();
                PODS.forEach(t -> row.put(t, true));
                m.put(f, row);
            }
        }

        static Reach of(ConnectivityMatrix cm) {
            Reach r = new Reach();
            assertThat(cm.pods()).containsExactlyElementsOf(PODS);
            for (String f : PODS) {
                for (String t : PODS) {
                    r.m.get(f).put(t, cm.allowed(f, t));
                }
            }
            return r;
        }

        Reach set(String from, String to, boolean v) {
            m.get(from).put(to, v);
            return this;
        }

        Reach ingress(String to, boolean v) {
            return peers(any(), is(to), v);
        }

        Reach egress(String from, boolean v) {
            return peers(is(from), any(), v);
        }

        Reach peers(Predicate<String> from, Predicate<String> to, boolean v) {
            for (String f : PODS) {
                for (String t : PODS) {
                    if (from.test(f) && to.test(t)) {
                        set(f, t, v);
                    }
                }
            }
            return this;
        }

        String table(Probe p) {
            StringBuilder sb = new StringBuilder(p.protocol() + "/" + p.port() + "\n    ");
            PODS.forEach(t -> sb.append(t).append(' '));
            sb.append('\n');
            for (String f : PODS) {
                sb.append(f).append(' ');
                for (String t : PODS) {
                    boolean v = f.equals(t) || m.get(f).get(t);
                    sb.append(v ? " .  " : " X  ");
                }
                sb.append('\n');
            }
            return sb.toString();
        }
    }

    /** The cluster objects of a case and the incremental calculator fed with every change. */
    static final class World {
        final Map<String, Namespace> namespaces = new LinkedHashMap<>();
        final Map<String, Pod> pods = new LinkedHashMap<>();
        final Map<String, NetworkPolicy> policies = new LinkedHashMap<>();
        final IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();

        World() {
            NetpolWorld.namespaces().forEach(n -> {
                namespaces.put(n.getMetadata().getName(), n);
                calc.upsertNamespace(n);
            });
            NetpolWorld.pods().forEach(p -> {
                pods.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
                calc.upsertPod(p);
            });
        }

        void put(NetworkPolicy np) {
            policies.put(
                    np.getMetadata().getNamespace() + "/" + np.getMetadata().getName(), np);
            calc.upsertPolicy(np);
        }

        void deletePolicy(String ns, String name) {
            policies.remove(ns + "/" + name);
            calc.deletePolicy(ns, name);
        }

        void labelPod(String pod, String key, String value) {
            Pod p = Objects.copy(pods.get(pod));
            Map<String, String> labels = new LinkedHashMap<>(p.getMetadata().getLabels());
            if (value == null) {
                labels.remove(key);
            } else {
                labels.put(key, value);
            }
            p.getMetadata().setLabels(labels);
            pods.put(pod, p);
            calc.upsertPod(p);
        }

        void replacePodPorts(String pod, int port, String protocol, String name) {
            Pod p = Objects.copy(pods.get(pod));
            p.getSpec()
                    .getContainers()
                    .forEach(c -> c.getPorts().removeIf(cp -> cp.getName().equals(name)));
            p.getSpec()
                    .getContainers()
                    .get(0)
                    .getPorts()
                    .add(new io.fabric8.kubernetes.api.model.ContainerPortBuilder()
                            .withName(name)
                            .withContainerPort(port)
                            .withProtocol(protocol)
                            .build());
            pods.put(pod, p);
            calc.upsertPod(p);
        }

        void labelNamespace(String ns, String key, String value) {
            Namespace n = Objects.copy(namespaces.get(ns));
            Map<String, String> labels = new LinkedHashMap<>(n.getMetadata().getLabels());
            if (value == null) {
                labels.remove(key);
            } else {
                labels.put(key, value);
            }
            n.getMetadata().setLabels(labels);
            namespaces.put(ns, n);
            calc.upsertNamespace(n);
        }

        void assertSameAsFromScratch() {
            IncrementalPolicyCalculator fresh = new IncrementalPolicyCalculator();
            List<NetworkPolicy> ps = new ArrayList<>(policies.values());
            ps.forEach(fresh::upsertPolicy);
            pods.values().forEach(fresh::upsertPod);
            namespaces.values().forEach(fresh::upsertNamespace);
            assertThat(calc.nodes()).isEqualTo(fresh.nodes());
            for (String node : fresh.nodes()) {
                assertThat(calc.snapshot(node)).as("node %s", node).isEqualTo(fresh.snapshot(node));
            }
        }
    }
}
