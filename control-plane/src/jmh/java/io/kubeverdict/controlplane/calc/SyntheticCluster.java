// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A large deterministic cluster shaped like a multi-tenant one: namespaces with a team label
 * (50 teams), pods with app/role labels and a named "http" port, spread at random over nodes,
 * and one policy per namespace drawn from a realistic mix: same-namespace app allow on a port,
 * cross-namespace team + role allow on a named port, default deny with DNS egress to kube-system,
 * ipBlock with except, and egress to a named port anywhere (one cluster-wide set).
 */
final class SyntheticCluster {
    final List<Namespace> namespaces = new ArrayList<>();
    final List<Pod> pods = new ArrayList<>();
    final List<NetworkPolicy> policies = new ArrayList<>();
    final List<Node> nodeObjects = new ArrayList<>();
    final List<GenericKubernetesResource> adminPolicies = new ArrayList<>();

    /**
     * The benchmark mains' cluster: sizes from -Dnodes, -Dnamespaces, -Dpods, -Dpolicies, -Dadmin,
     * -Dcnp (default 5000, 10000, 150000, 10000, 0, 0).
     */
    static SyntheticCluster fromSystemProperties() {
        return new SyntheticCluster(
                Integer.getInteger("nodes", 5000),
                Integer.getInteger("namespaces", 10000),
                Integer.getInteger("pods", 150000),
                Integer.getInteger("policies", 10000),
                Integer.getInteger("admin", 0),
                Integer.getInteger("cnp", 0),
                42);
    }

    SyntheticCluster(int nodes, int namespaceCount, int podCount, int policyCount, long seed) {
        this(nodes, namespaceCount, podCount, policyCount, 0, 0, seed);
    }

    SyntheticCluster(int nodes, int namespaceCount, int podCount, int policyCount, int adminPolicyCount, long seed) {
        this(nodes, namespaceCount, podCount, policyCount, adminPolicyCount, 0, seed);
    }

    /**
     * @param adminPolicyCount AdminNetworkPolicies (mixed subjects and rules, distinct priorities)
     *     plus, when positive, the BaselineAdminNetworkPolicy for every pod
     * @param clusterNetworkPolicyCount ClusterNetworkPolicies (v1alpha2; two thirds in the admin
     *     tier, a third in the baseline tier; priorities distinct from the ANPs')
     *     <p>With either, the cluster's Node objects too (for the nodes peers). The admin-tier
     *     kinds are drawn after everything else, so the rest is the same cluster.
     */
    SyntheticCluster(
            int nodes,
            int namespaceCount,
            int podCount,
            int policyCount,
            int adminPolicyCount,
            int clusterNetworkPolicyCount,
            long seed) {
        Random r = new Random(seed);
        for (int i = 0; i < namespaceCount; i++) {
            namespaces.add(new NamespaceBuilder()
                    .withNewMetadata()
                    .withName(ns(i))
                    .withLabels(Map.of("team", "team" + (i % 50), "env", i % 3 == 0 ? "prod" : "dev"))
                    .endMetadata()
                    .build());
        }
        for (int i = 0; i < podCount; i++) {
            pods.add(pod(
                    ns(i % namespaceCount), "pod" + i, i, "app" + (i / namespaceCount % 5), "node" + r.nextInt(nodes)));
        }
        for (int i = 0; i < policyCount; i++) {
            policies.add(policy(ns(i % namespaceCount), "np" + i, r));
        }
        if (adminPolicyCount > 0 || clusterNetworkPolicyCount > 0) {
            for (int n = 0; n < nodes; n++) {
                nodeObjects.add(new NodeBuilder()
                        .withNewMetadata()
                        .withName("node" + n)
                        .withLabels(
                                n < 3 ? Map.of("role", "control-plane") : Map.of("role", "worker", "zone", "z" + n % 3))
                        .endMetadata()
                        .withNewStatus()
                        .addNewAddress()
                        .withType("InternalIP")
                        .withAddress("172.16." + (n >> 8) + "." + (n & 255))
                        .endAddress()
                        .endStatus()
                        .build());
            }
        }
        if (adminPolicyCount > 0) {
            for (int i = 0; i < adminPolicyCount; i++) {
                adminPolicies.add(adminPolicy(i, r));
            }
            adminPolicies.add(YAML.unmarshal("""
                    apiVersion: policy.networking.k8s.io/v1alpha1
                    kind: BaselineAdminNetworkPolicy
                    metadata: {name: default}
                    spec:
                      subject: {namespaces: {}}
                      ingress:
                      - {name: same-team, action: Allow, from: [{namespaces: {matchLabels: {env: dev}}}]}
                      - {name: deny-rest, action: Deny, from: [{namespaces: {}}]}
                    """, GenericKubernetesResource.class));
        }
        for (int i = 0; i < clusterNetworkPolicyCount; i++) {
            adminPolicies.add(clusterNetworkPolicy(i, r));
        }
    }

    private static final KubernetesSerialization YAML = new KubernetesSerialization();

    /**
     * An AdminNetworkPolicy of a realistic mix: subjects a team's namespaces, one namespace, prod
     * frontends, or one app cluster-wide; rules Deny/Pass/Allow over team namespaces, kube-system,
     * pods by app, the metadata address, control-plane nodes, on numbered and named ports.
     */
    static GenericKubernetesResource adminPolicy(int i, Random r) {
        String subject = switch (i % 4) {
            case 0 -> "{namespaces: {matchLabels: {team: team" + r.nextInt(50) + "}}}";
            case 1 -> "{namespaces: {matchLabels: {kubernetes.io/metadata.name: ns" + (1 + r.nextInt(9999)) + "}}}";
            case 2 ->
                "{pods: {namespaceSelector: {matchLabels: {env: prod}}, podSelector: {matchLabels: {role: frontend}}}}";
            default -> "{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: app" + r.nextInt(5) + "}}}}";
        };
        return YAML.unmarshal(
                """
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata: {name: anp%d}
                spec:
                  priority: %d
                  subject: %s
                  ingress:
                  - {name: no-ssh, action: Deny, from: [{namespaces: {}}], ports: [{portNumber: {port: 22}}]}
                  - {name: kube-system, action: Pass, from: [{namespaces: {matchLabels: {kubernetes.io/metadata.name: kube-system}}}]}
                  - {name: team, action: Allow, from: [{namespaces: {matchLabels: {team: team%d}}}], ports: [{namedPort: http}]}
                  egress:
                  - {name: metadata, action: Deny, to: [{networks: [169.254.169.254/32]}]}
                  - {name: control-plane, action: Deny, to: [{nodes: {matchLabels: {role: control-plane}}}]}
                  - {name: peers, action: Pass, to: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: app%d}}}}]}
                """.formatted(i, i * 10, subject, r.nextInt(50), r.nextInt(5)), GenericKubernetesResource.class);
    }

    /**
     * A ClusterNetworkPolicy: every third in the baseline tier (Accept/Deny), the others in the
     * admin tier (Accept/Pass/Deny), priorities i * 20 + 5 (never an ANP's); subjects a team's
     * namespaces, the prod namespaces, one app cluster-wide or one namespace; ingress from a
     * team's namespaces on a port and from prod frontends on the named port, egress DNS to
     * kube-system, a team's pods on a port range, and the internet denied.
     */
    static GenericKubernetesResource clusterNetworkPolicy(int i, Random r) {
        boolean baseline = i % 3 == 2;
        String subject = switch (i % 4) {
            case 0 -> "{namespaces: {matchLabels: {team: team" + r.nextInt(50) + "}}}";
            case 1 -> "{namespaces: {matchLabels: {env: prod}}}";
            case 2 -> "{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: app" + r.nextInt(5) + "}}}}";
            default -> "{namespaces: {matchLabels: {kubernetes.io/metadata.name: ns" + (1 + r.nextInt(9999)) + "}}}";
        };
        return YAML.unmarshal(
                """
                apiVersion: policy.networking.k8s.io/v1alpha2
                kind: ClusterNetworkPolicy
                metadata: {name: cnp%d}
                spec:
                  tier: %s
                  priority: %d
                  subject: %s
                  ingress:
                  - {name: monitoring, action: Accept, from: [{namespaces: {matchLabels: {team: team%d}}}], protocols: [{tcp: {destinationPort: {number: 9090}}}]}
                  - {name: frontends, action: %s, from: [{pods: {namespaceSelector: {matchLabels: {env: prod}}, podSelector: {matchLabels: {role: frontend}}}}], protocols: [{destinationNamedPort: http}]}
                  egress:
                  - {name: dns, action: Accept, to: [{namespaces: {matchLabels: {kubernetes.io/metadata.name: kube-system}}}], protocols: [{udp: {destinationPort: {number: 53}}}]}
                  - {name: team, action: %s, to: [{pods: {namespaceSelector: {matchLabels: {team: team%d}}, podSelector: {}}}], protocols: [{tcp: {destinationPort: {range: {start: 8000, end: 8999}}}}]}
                  - {name: internet, action: Deny, to: [{networks: [0.0.0.0/0]}]}
                """.formatted(
                                i,
                                baseline ? "Baseline" : "Admin",
                                i * 20 + 5,
                                subject,
                                r.nextInt(50),
                                baseline ? "Accept" : "Pass",
                                baseline ? "Deny" : "Accept",
                                r.nextInt(50)),
                GenericKubernetesResource.class);
    }

    static String ns(int i) {
        return i == 0 ? "kube-system" : "ns" + i;
    }

    static Pod pod(String ns, String name, int i, String app, String node) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withLabels(Map.of("app", app, "role", i % 4 == 0 ? "frontend" : "backend"))
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .withContainers(new ContainerBuilder()
                        .withName("c")
                        .withImage("img")
                        .withPorts(new ContainerPortBuilder()
                                .withName("http")
                                .withContainerPort(8080 + i % 3)
                                .build())
                        .build())
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIPs(new PodIP("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255)))
                .endStatus()
                .build();
    }

    private static LabelSelector labels(String k, String v) {
        LabelSelector s = new LabelSelector();
        s.setMatchLabels(Map.of(k, v));
        return s;
    }

    static NetworkPolicy policy(String ns, String name, Random r) {
        NetworkPolicyBuilder b = new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .endMetadata();
        int kind = r.nextInt(10);
        String app = "app" + r.nextInt(5);
        NetworkPolicyPeer peer = new NetworkPolicyPeer();
        NetworkPolicyPort port = new NetworkPolicyPort();
        switch (kind) {
            case 0, 1, 2, 3 -> {
                peer.setPodSelector(labels("app", "app" + r.nextInt(5)));
                port.setPort(new IntOrString(8080));
                return b.withNewSpec()
                        .withPodSelector(labels("app", app))
                        .withIngress(new NetworkPolicyIngressRule(List.of(peer), List.of(port)))
                        .endSpec()
                        .build();
            }
            case 4, 5 -> {
                peer.setNamespaceSelector(labels("team", "team" + r.nextInt(50)));
                peer.setPodSelector(labels("role", "frontend"));
                port.setPort(new IntOrString("http"));
                return b.withNewSpec()
                        .withPodSelector(labels("app", app))
                        .withIngress(new NetworkPolicyIngressRule(List.of(peer), List.of(port)))
                        .endSpec()
                        .build();
            }
            case 6, 7 -> {
                peer.setNamespaceSelector(labels("kubernetes.io/metadata.name", "kube-system"));
                port.setProtocol("UDP");
                port.setPort(new IntOrString(53));
                return b.withNewSpec()
                        .withPodSelector(new LabelSelector())
                        .withPolicyTypes("Ingress", "Egress")
                        .withEgress(new NetworkPolicyEgressRule(List.of(port), List.of(peer)))
                        .endSpec()
                        .build();
            }
            case 8 -> {
                peer.setIpBlock(new IPBlock("10.0.0.0/8", List.of("10.0." + r.nextInt(256) + ".0/24")));
                LabelSelector sel = new LabelSelector();
                sel.setMatchExpressions(List.of(new LabelSelectorRequirement("role", "In", List.of("frontend"))));
                return b.withNewSpec()
                        .withPodSelector(sel)
                        .withIngress(new NetworkPolicyIngressRule(List.of(peer), List.of()))
                        .endSpec()
                        .build();
            }
            default -> {
                peer.setNamespaceSelector(labels("env", "prod"));
                port.setPort(new IntOrString("http"));
                return b.withNewSpec()
                        .withPodSelector(labels("app", app))
                        .withPolicyTypes("Egress")
                        .withEgress(new NetworkPolicyEgressRule(List.of(port), List.of(peer)))
                        .endSpec()
                        .build();
            }
        }
    }

    IncrementalPolicyCalculator calculateAll() {
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        nodeObjects.forEach(calc::upsertNode);
        namespaces.forEach(calc::upsertNamespace);
        pods.forEach(calc::upsertPod);
        policies.forEach(calc::upsertPolicy);
        adminPolicies.forEach(calc::upsertAdminPolicy);
        // Drained as the service drains (drainChangedNodes would also keep its set -> nodes index).
        for (String node : calc.drainChanges().nodes()) {
            calc.snapshot(node);
        }
        return calc;
    }
}
