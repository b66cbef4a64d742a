// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class DeployManifestsTest {
    static final List<String> RECOMMENDED_LABELS = List.of(
            "app.kubernetes.io/name",
            "app.kubernetes.io/instance",
            "app.kubernetes.io/component",
            "app.kubernetes.io/part-of",
            "app.kubernetes.io/version",
            "app.kubernetes.io/managed-by");

    @Test
    void everyBaseManifestIsATypedKubernetesObjectWithoutUnknownFields() throws Exception {
        Path base = DeployManifests.deployDir().resolve("base");
        int objects = 0;
        for (Path file : DeployManifests.yamlFiles(base)) {
            if (file.getFileName().toString().equals("kustomization.yaml")) {
                continue;
            }
            for (HasMetadata object : DeployManifests.load(file)) {
                assertThat(object).as(file + ": typed kind").isNotInstanceOf(GenericKubernetesResource.class);
                assertThat(UnknownFields.of(object))
                        .as(file + ": fields fabric8's model does not know")
                        .isEmpty();
                objects++;
            }
        }
        assertThat(objects).isGreaterThanOrEqualTo(9);
        assertThat(DeployManifests.base())
                .as("rendered base")
                .hasSize(objects)
                .allSatisfy(o -> assertThat(UnknownFields.of(o))
                        .as(o.getKind() + " rendered")
                        .isEmpty());
    }

    @Test
    void kustomizationListsExactlyTheBaseFiles() throws Exception {
        Path base = DeployManifests.deployDir().resolve("base");
        String kustomization = Files.readString(base.resolve("kustomization.yaml"));
        for (Path file : DeployManifests.yamlFiles(base)) {
            String name = file.getFileName().toString();
            if (!name.equals("kustomization.yaml")) {
                assertThat(kustomization).as("kustomization.yaml lists " + name).contains("- " + name);
            }
        }
    }

    @Test
    void theTopLevelKustomizationIsTheBase() {
        assertThat(DeployManifests.build(DeployManifests.deployDir())).isEqualTo(DeployManifests.base());
    }

    @Test
    void everyObjectCarriesTheRecommendedLabelsOfOneVersion() {
        List<HasMetadata> objects = DeployManifests.base();
        String version = DeployManifests.find(Deployment.class, "kube-verdict-control-plane")
                .getMetadata()
                .getLabels()
                .get("app.kubernetes.io/version");
        assertThat(version).matches("\\d+\\.\\d+\\.\\d+.*");
        for (HasMetadata object : objects) {
            Map<String, String> labels = object.getMetadata().getLabels();
            String what = object.getKind() + "/" + object.getMetadata().getName();
            assertThat(labels)
                    .as(what)
                    .containsKeys(RECOMMENDED_LABELS.toArray(String[]::new))
                    .containsEntry("app.kubernetes.io/part-of", "kube-verdict")
                    .containsEntry("app.kubernetes.io/managed-by", "kustomize")
                    .containsEntry("app.kubernetes.io/version", version);
        }
        for (PodTemplateSpec template : DeployManifests.podTemplates(objects)) {
            assertThat(template.getMetadata().getLabels()).containsKeys(RECOMMENDED_LABELS.toArray(String[]::new));
        }
    }

    @Test
    void selectorsSelectTheirPodsAndCarryNoVersion() {
        List<HasMetadata> objects = DeployManifests.base();
        Deployment cp = DeployManifests.find(objects, Deployment.class, "kube-verdict-control-plane");
        DaemonSet agent = DeployManifests.find(objects, DaemonSet.class, "kube-verdict-agent");
        Map<String, String> cpPods = cp.getSpec().getTemplate().getMetadata().getLabels();
        Map<String, String> agentPods =
                agent.getSpec().getTemplate().getMetadata().getLabels();
        List<Map<String, String>> cpSelectors = List.of(
                cp.getSpec().getSelector().getMatchLabels(),
                DeployManifests.find(objects, Service.class, "kube-verdict-control-plane")
                        .getSpec()
                        .getSelector(),
                DeployManifests.find(objects, PodDisruptionBudget.class, "kube-verdict-control-plane")
                        .getSpec()
                        .getSelector()
                        .getMatchLabels(),
                cp.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getAffinity()
                        .getPodAntiAffinity()
                        .getPreferredDuringSchedulingIgnoredDuringExecution()
                        .get(0)
                        .getPodAffinityTerm()
                        .getLabelSelector()
                        .getMatchLabels());
        for (Map<String, String> selector : cpSelectors) {
            assertThat(cpPods).containsAllEntriesOf(selector);
            assertThat(agentPods)
                    .as("a control-plane selector must not select agents")
                    .doesNotContainEntry("app.kubernetes.io/name", selector.get("app.kubernetes.io/name"));
        }
        Map<String, String> agentSelector = agent.getSpec().getSelector().getMatchLabels();
        assertThat(agentPods).containsAllEntriesOf(agentSelector);
        for (Map<String, String> selector :
                Stream.concat(cpSelectors.stream(), Stream.of(agentSelector)).toList()) {
            assertThat(selector)
                    .isNotEmpty()
                    .doesNotContainKeys("app.kubernetes.io/version", "app.kubernetes.io/managed-by");
        }
    }

    @Test
    void imagesArePinnedInTheKustomizationOnly() throws Exception {
        Path base = DeployManifests.deployDir().resolve("base");
        for (Path file : DeployManifests.yamlFiles(base)) {
            for (PodTemplateSpec template : DeployManifests.podTemplates(
                    file.endsWith("kustomization.yaml") ? List.of() : DeployManifests.load(file))) {
                for (Container c : template.getSpec().getContainers()) {
                    assertThat(Kustomize.imageName(c.getImage()))
                            .as(file + ": image without tag or digest")
                            .isEqualTo(c.getImage());
                }
            }
        }
        for (HasMetadata object : DeployManifests.base()) {
            for (PodTemplateSpec template : DeployManifests.podTemplates(List.of(object))) {
                String version = object.getMetadata().getLabels().get("app.kubernetes.io/version");
                assertThat(template.getSpec().getContainers())
                        .allSatisfy(c ->
                                assertThat(c.getImage()).as("rendered image").endsWith(":" + version));
            }
        }
    }

    @Test
    void imageNamesLoseTagAndDigestButNotARegistryPort() {
        assertThat(Kustomize.imageName("ghcr.io/kube-verdict/agent:0.1.0")).isEqualTo("ghcr.io/kube-verdict/agent");
        assertThat(Kustomize.imageName("registry:5000/agent@sha256:ab")).isEqualTo("registry:5000/agent");
        assertThat(Kustomize.imageName("registry:5000/agent")).isEqualTo("registry:5000/agent");
    }

    @Test
    void agentRunsWithOnlyTheCapabilitiesItNeedsAndNoApiAccess() {
        DaemonSet agent = DeployManifests.find(DaemonSet.class, "kube-verdict-agent");
        var pod = agent.getSpec().getTemplate().getSpec();
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(DeployManifests.find(ServiceAccount.class, "kube-verdict-agent")
                        .getAutomountServiceAccountToken())
                .isFalse();
        assertThat(pod.getPriorityClassName()).isEqualTo("system-node-critical");
        var security = pod.getContainers().get(0).getSecurityContext();
        assertThat(security.getPrivileged()).isFalse();
        assertThat(security.getAllowPrivilegeEscalation()).isFalse();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        // Netlink (nfqueue, conntrack, nftables) needs NET_ADMIN only; nothing opens a raw socket (audit L8).
        assertThat(security.getCapabilities().getAdd()).containsExactly("NET_ADMIN");
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("NODE_NAME");
            assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
        });
    }

    /**
     * Audit L8: a NetworkPolicy on the control plane's pods. gRPC stays open (the agents use the
     * host network: their connections come from node addresses), metrics only from a named peer
     * (the kubelet's probes come from the pod's node, which NetworkPolicy never blocks), and out
     * only to the API server.
     */
    @Test
    void aNetworkPolicyAdmitsGrpcAndTheScraperOnlyAndLetsOutOnlyToTheApiServer() {
        List<HasMetadata> base = DeployManifests.base();
        NetworkPolicy policy = DeployManifests.find(base, NetworkPolicy.class, "kube-verdict-control-plane");
        PodTemplateSpec cp = DeployManifests.find(base, Deployment.class, "kube-verdict-control-plane")
                .getSpec()
                .getTemplate();
        assertThat(cp.getMetadata().getLabels())
                .containsAllEntriesOf(policy.getSpec().getPodSelector().getMatchLabels());
        assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
        List<String> declared = cp.getSpec().getContainers().get(0).getPorts().stream()
                .map(ContainerPort::getName)
                .toList();
        Map<String, NetworkPolicyIngressRule> byPort = new java.util.TreeMap<>();
        for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
            for (NetworkPolicyPort port : rule.getPorts()) {
                assertThat(declared)
                        .as("a port the container declares")
                        .contains(port.getPort().getStrVal());
                byPort.put(port.getPort().getStrVal(), rule);
            }
        }
        assertThat(byPort).containsOnlyKeys("grpc", "metrics");
        assertThat(byPort.get("grpc").getFrom())
                .as("agents on the host network: any source")
                .isNullOrEmpty();
        assertThat(byPort.get("metrics").getFrom()).as("the scraper only").isNotEmpty();
        assertThat(policy.getSpec().getEgress())
                .flatExtracting(NetworkPolicyEgressRule::getPorts)
                .extracting(p -> p.getPort().getIntVal())
                .containsExactlyInAnyOrder(443, 6443);
    }

    /**
     * Audit L8: auto TLS's Secret and ConfigMap are shipped empty, so the Role creates nothing; the
     * agents mount only the bundle's key, so their pods wait until the control plane wrote it.
     */
    @Test
    void autoTlsObjectsAreShippedEmptySoTheRoleCreatesNothing() {
        List<HasMetadata> base = DeployManifests.base();
        Secret secret = DeployManifests.find(base, Secret.class, "kube-verdict-auto-tls");
        assertThat(secret.getData()).isNullOrEmpty();
        assertThat(secret.getStringData()).isNullOrEmpty();
        assertThat(DeployManifests.find(base, ConfigMap.class, "kube-verdict-ca")
                        .getData())
                .isNullOrEmpty();
        Role role = DeployManifests.find(base, Role.class, "kube-verdict-control-plane");
        assertThat(role.getRules()).allSatisfy(rule -> {
            assertThat(rule.getVerbs()).doesNotContain("create", "*");
            assertThat(rule.getResourceNames()).isNotEmpty();
        });
        var volume = DeployManifests.find(base, DaemonSet.class, "kube-verdict-agent")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getVolumes()
                .stream()
                .filter(v -> v.getName().equals("control-plane-ca"))
                .findFirst()
                .orElseThrow();
        assertThat(volume.getConfigMap().getName()).isEqualTo("kube-verdict-ca");
        assertThat(volume.getConfigMap().getOptional()).isNotEqualTo(Boolean.TRUE);
        assertThat(volume.getConfigMap().getItems())
                .singleElement()
                .satisfies(item -> assertThat(item.getKey()).isEqualTo("ca.crt"));
    }

    @Test
    void agentIsHardenedForProduction() {
        PodSpec pod = DeployManifests.find(DaemonSet.class, "kube-verdict-agent")
                .getSpec()
                .getTemplate()
                .getSpec();
        Container agent = pod.getContainers().get(0);
        assertThat(pod.getNodeSelector()).containsEntry("kubernetes.io/os", "linux");
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(agent.getStartupProbe()).isNotNull();
        assertThat(agent.getLivenessProbe().getInitialDelaySeconds())
                .as("the startup probe replaces it")
                .isNull();
        assertThat(agent.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getMountPath()).isEqualTo("/run/xtables.lock");
            var volume = pod.getVolumes().stream()
                    .filter(v -> v.getName().equals(m.getName()))
                    .findFirst()
                    .orElseThrow();
            assertThat(volume.getHostPath().getPath()).isEqualTo("/run/xtables.lock");
            assertThat(volume.getHostPath().getType()).isEqualTo("FileOrCreate");
        });
    }

    @Test
    void theAgentHasNoApiTokenButAProjectedTokenForTheControlPlane() {
        PodSpec pod = DeployManifests.find(DaemonSet.class, "kube-verdict-agent")
                .getSpec()
                .getTemplate()
                .getSpec();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        Container agent = pod.getContainers().get(0);
        assertThat(agent.getArgs()).contains("--auth=token", "--token-file=/var/run/secrets/kube-verdict/token");
        var mount = agent.getVolumeMounts().stream()
                .filter(m -> m.getMountPath().equals("/var/run/secrets/kube-verdict"))
                .findFirst()
                .orElseThrow();
        var volume = pod.getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName()))
                .findFirst()
                .orElseThrow();
        assertThat(volume.getProjected().getSources()).singleElement().satisfies(source -> {
            assertThat(source.getServiceAccountToken().getAudience()).isEqualTo("kube-verdict");
            assertThat(source.getServiceAccountToken().getPath()).isEqualTo("token");
            assertThat(source.getServiceAccountToken().getExpirationSeconds()).isLessThanOrEqualTo(3600L);
        });
        Container cp = DeployManifests.find(Deployment.class, "kube-verdict-control-plane")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        assertThat(cp.getArgs())
                .contains(
                        "--auth=token",
                        "--agent-service-account=kube-verdict/"
                                + DeployManifests.find(ServiceAccount.class, "kube-verdict-agent")
                                        .getMetadata()
                                        .getName());
    }

    @Test
    void controlPlaneIsReplicatedNonRootAndReadOnly() {
        Deployment cp = DeployManifests.find(Deployment.class, "kube-verdict-control-plane");
        assertThat(cp.getSpec().getReplicas()).isEqualTo(2);
        var pod = cp.getSpec().getTemplate().getSpec();
        assertThat(pod.getAffinity().getPodAntiAffinity()).isNotNull();
        assertThat(pod.getNodeSelector()).containsEntry("kubernetes.io/os", "linux");
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        var container = pod.getContainers().get(0);
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        // The gRPC port speaks TLS (auto TLS) and the kubelet's gRPC probe does not: /readyz.
        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(container.getStartupProbe()).isNotNull();
    }

    @Test
    void aDrainLeavesAControlPlaneReplicaRunning() {
        Deployment cp = DeployManifests.find(Deployment.class, "kube-verdict-control-plane");
        PodDisruptionBudget pdb = DeployManifests.find(PodDisruptionBudget.class, "kube-verdict-control-plane");
        assertThat(pdb.getSpec().getMinAvailable()).isNull();
        assertThat(pdb.getSpec().getMaxUnavailable()).isEqualTo(new IntOrString(1));
        assertThat(cp.getSpec().getReplicas())
                .isGreaterThan(pdb.getSpec().getMaxUnavailable().getIntVal());
    }

    @Test
    void everyContainerProbesADeclaredPortAndReportsItsLogsOnError() {
        for (PodTemplateSpec template : DeployManifests.podTemplates(DeployManifests.base())) {
            for (Container c : template.getSpec().getContainers()) {
                List<Integer> ports = c.getPorts().stream()
                        .map(ContainerPort::getContainerPort)
                        .toList();
                for (Probe probe : Stream.of(c.getStartupProbe(), c.getReadinessProbe(), c.getLivenessProbe())
                        .filter(Objects::nonNull)
                        .toList()) {
                    assertThat(ports).as(c.getName() + " probe port").contains(probePort(probe));
                }
                assertThat(c.getTerminationMessagePolicy()).as(c.getName()).isEqualTo("FallbackToLogsOnError");
            }
        }
    }

    @Test
    void theControlPlaneBindingNamesItsServiceAccountWhereKustomizePutsIt() {
        ClusterRoleBinding binding = DeployManifests.find(ClusterRoleBinding.class, "kube-verdict-control-plane");
        ServiceAccount account = DeployManifests.find(ServiceAccount.class, "kube-verdict-control-plane");
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getName()).isEqualTo(account.getMetadata().getName());
            assertThat(s.getNamespace()).isEqualTo(account.getMetadata().getNamespace());
        });
    }

    static int probePort(Probe probe) {
        if (probe.getGrpc() != null) {
            return probe.getGrpc().getPort();
        }
        if (probe.getTcpSocket() != null) {
            return probe.getTcpSocket().getPort().getIntVal();
        }
        return probe.getHttpGet().getPort().getIntVal();
    }
}
