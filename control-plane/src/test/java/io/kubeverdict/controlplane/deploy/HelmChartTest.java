// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart, run through helm itself, installs what the kustomize base installs: with default
 * values every object equals the base's (labels aside: Helm manages them and names the chart), with
 * tls.enabled the mTLS overlay's arguments, mounts and probe, with monitoring.enabled the
 * monitoring component's objects. Values change what they say and keep the pieces pointing at
 * each other (ports, names, namespace).
 */
class HelmChartTest {

    @Test
    void helmLintPassesStrictly() {
        LintResult lint = HelmChart.lint();
        assertThat(lint.isFailed())
                .as("helm lint --strict: %s", lint.getMessages())
                .isFalse();
        assertThat(lint.getMessages())
                .as("helm lint --strict")
                .noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
    }

    @Test
    void defaultsRenderTypedObjectsWithoutUnknownFields() {
        List<HasMetadata> objects = HelmChart.template("");
        assertThat(objects).isNotEmpty().allSatisfy(o -> {
            assertThat(o).as(o.getKind()).isNotInstanceOf(GenericKubernetesResource.class);
            assertThat(UnknownFields.of(o))
                    .as(o.getKind() + "/" + o.getMetadata().getName())
                    .isEmpty();
        });
    }

    @Test
    void defaultsInstallExactlyTheKustomizeBase() {
        // The chart leaves the namespace to `helm install --create-namespace` or the operator.
        List<HasMetadata> base = DeployManifests.base().stream()
                .filter(o -> !(o instanceof Namespace))
                .toList();
        List<HasMetadata> chart = HelmChart.template("");
        assertThat(keys(chart)).containsExactlyInAnyOrderElementsOf(keys(base));
        for (HasMetadata expected : base) {
            HasMetadata actual = same(chart, expected);
            assertThat(comparable(actual, "Helm")).as(key(expected)).isEqualTo(comparable(expected, "kustomize"));
        }
    }

    @Test
    void namespaceCreateRendersTheBaseNamespace() {
        Namespace expected = DeployManifests.find(Namespace.class, "kube-verdict");
        Namespace actual = DeployManifests.find(
                HelmChart.template("namespace: {create: true}"), Namespace.class, HelmChart.NAMESPACE);
        assertThat(comparable(actual, "Helm")).isEqualTo(comparable(expected, "kustomize"));
    }

    @Test
    void monitoringRendersTheMonitoringComponent() {
        List<HasMetadata> component = new ArrayList<>(
                DeployManifests.build(DeployManifests.deployDir().resolve("overlays/monitoring")));
        component.removeAll(DeployManifests.base());
        List<HasMetadata> chart = new ArrayList<>(HelmChart.template("monitoring: {enabled: true}"));
        chart.removeAll(HelmChart.template(""));
        assertThat(keys(component))
                .containsExactlyInAnyOrder(
                        "ServiceMonitor/kube-verdict-control-plane",
                        "PodMonitor/kube-verdict-agent",
                        "PrometheusRule/kube-verdict",
                        "ConfigMap/kube-verdict-dashboard");
        assertThat(keys(chart)).containsExactlyInAnyOrderElementsOf(keys(component));
        for (HasMetadata expected : component) {
            assertThat(comparable(same(chart, expected), "Helm"))
                    .as(key(expected))
                    .isEqualTo(comparable(expected, "kustomize"));
        }
    }

    @Test
    void monitoringPartsCanBeLeftOutAndLabelledForTheirPrometheus() {
        List<HasMetadata> objects = HelmChart.template("""
                monitoring:
                  enabled: true
                  labels: {release: prometheus}
                  rules: {enabled: false}
                  dashboard: {enabled: false}
                """);
        List<HasMetadata> monitors = objects.stream()
                .filter(o -> o instanceof GenericKubernetesResource)
                .toList();
        assertThat(keys(monitors))
                .containsExactlyInAnyOrder(
                        "ServiceMonitor/kube-verdict-control-plane", "PodMonitor/kube-verdict-agent");
        assertThat(monitors)
                .allSatisfy(m -> assertThat(m.getMetadata().getLabels()).containsEntry("release", "prometheus"));
        assertThat(keys(objects)).doesNotContain("ConfigMap/kube-verdict-dashboard");
    }

    @Test
    void tlsRendersTheMtlsOverlay() {
        List<HasMetadata> chart = HelmChart.template("tls: {enabled: true}");
        var overlay = DeployManifests.deployDir().resolve("overlays/mtls");
        Deployment cpPatch = (Deployment)
                DeployManifests.load(overlay.resolve("control-plane-tls.yaml")).get(0);
        DaemonSet agentPatch = (DaemonSet)
                DeployManifests.load(overlay.resolve("agent-tls.yaml")).get(0);

        PodTemplateSpec cp = DeployManifests.find(chart, Deployment.class, "kube-verdict-control-plane")
                .getSpec()
                .getTemplate();
        PodTemplateSpec agent = DeployManifests.find(chart, DaemonSet.class, "kube-verdict-agent")
                .getSpec()
                .getTemplate();
        for (var pair : List.of(
                List.of(cp, cpPatch.getSpec().getTemplate()),
                List.of(agent, agentPatch.getSpec().getTemplate()))) {
            PodTemplateSpec rendered = pair.get(0);
            PodTemplateSpec patch = pair.get(1);
            Container container = rendered.getSpec().getContainers().get(0);
            Container patched = patch.getSpec().getContainers().get(0);
            assertThat(container.getArgs()).isEqualTo(patched.getArgs());
            // "$patch: delete" entries remove the base's auto-TLS bundle: the chart must not have them.
            var deletedMounts = patched.getVolumeMounts().stream()
                    .filter(m -> m.getAdditionalProperties().containsKey("$patch"))
                    .map(m -> m.getName())
                    .toList();
            var deletedVolumes = patch.getSpec().getVolumes().stream()
                    .filter(v -> v.getAdditionalProperties().containsKey("$patch"))
                    .map(v -> v.getName())
                    .toList();
            assertThat(container.getVolumeMounts())
                    .containsAll(patched.getVolumeMounts().stream()
                            .filter(m -> !deletedMounts.contains(m.getName()))
                            .toList());
            assertThat(container.getVolumeMounts()).noneMatch(m -> deletedMounts.contains(m.getName()));
            assertThat(rendered.getSpec().getVolumes())
                    .containsAll(patch.getSpec().getVolumes().stream()
                            .filter(v -> !deletedVolumes.contains(v.getName()))
                            .toList());
            assertThat(rendered.getSpec().getVolumes()).noneMatch(v -> deletedVolumes.contains(v.getName()));
        }
        Container cpContainer = cp.getSpec().getContainers().get(0);
        var readiness =
                cpPatch.getSpec().getTemplate().getSpec().getContainers().get(0).getReadinessProbe();
        assertThat(readiness.getGrpc()).as("the overlay drops the gRPC probe").isNull();
        assertThat(cpContainer.getReadinessProbe().getGrpc()).isNull();
        assertThat(cpContainer.getReadinessProbe().getHttpGet()).isEqualTo(readiness.getHttpGet());
    }

    @Test
    void agentValuesBecomeItsFlags() {
        Container agent = agentContainer(HelmChart.template("""
                agent:
                  failOpen: true
                  nfqueueId: 7
                  queues: 3
                  extraArgs: ["--queue-path=nft"]
                """));
        assertThat(agent.getArgs())
                .contains("--fail-open", "--nfqueue-id=7", "--queues=3", "--queue-path=nft")
                .doesNotContain("--nfqueue-id=100");
        assertThat(agentContainer(HelmChart.template("")))
                .satisfies(c ->
                        assertThat(c.getArgs()).doesNotContain("--fail-open").noneMatch(a -> a.startsWith("--queues")));
    }

    @Test
    void imagesByTagOrDigest() {
        List<HasMetadata> objects = HelmChart.template("""
                controlPlane: {image: {repository: registry.example/cp, tag: "1.2.3"}}
                agent: {image: {repository: registry.example/agent, tag: "1.2.3", digest: "sha256:0123abcd"}}
                """);
        assertThat(DeployManifests.find(objects, Deployment.class, "kube-verdict-control-plane")
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getImage())
                .isEqualTo("registry.example/cp:1.2.3");
        assertThat(agentContainer(objects).getImage()).isEqualTo("registry.example/agent@sha256:0123abcd");
    }

    @Test
    void schedulingAndSizeValuesApply() {
        List<HasMetadata> objects = HelmChart.template("""
                controlPlane:
                  replicas: 3
                  podDisruptionBudget: {enabled: false}
                  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]
                agent:
                  nodeSelector: {pool: workers}
                  resources: {requests: {cpu: 50m}}
                """);
        Deployment cp = DeployManifests.find(objects, Deployment.class, "kube-verdict-control-plane");
        assertThat(cp.getSpec().getReplicas()).isEqualTo(3);
        assertThat(cp.getSpec().getTemplate().getSpec().getTolerations())
                .singleElement()
                .satisfies(t -> assertThat(t.getKey()).isEqualTo("dedicated"));
        assertThat(objects).noneMatch(o -> o instanceof PodDisruptionBudget);
        var agentPod = DeployManifests.find(objects, DaemonSet.class, "kube-verdict-agent")
                .getSpec()
                .getTemplate()
                .getSpec();
        // Helm merges maps from values files into the defaults (a null value removes a default key).
        assertThat(agentPod.getNodeSelector()).isEqualTo(Map.of("kubernetes.io/os", "linux", "pool", "workers"));
        assertThat(agentPod.getContainers().get(0).getResources().getRequests().get("cpu"))
                .hasToString("50m");
    }

    @Test
    void networkPolicyValuesNarrowOrDropIt() {
        assertThat(HelmChart.template("networkPolicy: {enabled: false}")).noneMatch(NetworkPolicy.class::isInstance);
        NetworkPolicy policy =
                DeployManifests.find(HelmChart.template("""
                        networkPolicy:
                          grpcFrom: [{ipBlock: {cidr: 10.0.0.0/16}}]
                          metricsFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: observability}}}]
                          apiServerPorts: [8443]
                        """), NetworkPolicy.class, "kube-verdict-control-plane");
        assertThat(policy.getSpec().getIngress()).hasSize(2);
        assertThat(policy.getSpec().getIngress().get(0).getFrom())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getIpBlock().getCidr()).isEqualTo("10.0.0.0/16"));
        assertThat(policy.getSpec().getIngress().get(1).getFrom())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getNamespaceSelector().getMatchLabels())
                        .containsEntry("kubernetes.io/metadata.name", "observability"));
        assertThat(policy.getSpec().getEgress())
                .singleElement()
                .satisfies(rule -> assertThat(rule.getPorts())
                        .singleElement()
                        .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(8443)));
    }

    @Test
    void extraEgressRulesFollowTheApiServerOnes() {
        NetworkPolicy policy =
                DeployManifests.find(HelmChart.template("""
                        networkPolicy:
                          extraEgress:
                            - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: observability}}}]
                              ports: [{port: 4318, protocol: TCP}]
                            - ports: [{port: 53, protocol: UDP}]
                        """), NetworkPolicy.class, "kube-verdict-control-plane");
        assertThat(policy.getSpec().getEgress()).hasSize(3);
        assertThat(policy.getSpec().getEgress().get(1).getTo())
                .singleElement()
                .satisfies(peer -> assertThat(peer.getNamespaceSelector().getMatchLabels())
                        .containsEntry("kubernetes.io/metadata.name", "observability"));
        assertThat(policy.getSpec().getEgress().get(2).getPorts())
                .singleElement()
                .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(53));
    }

    @Test
    void anotherReleaseNamespaceAndPortsStayWiredTogether() {
        List<HasMetadata> objects = HelmChart.template("net", "policy-system", """
                controlPlane: {port: 7443, metricsPort: 7100}
                agent: {metricsPort: 7101, inspectPort: 7102}
                """);
        Service service = DeployManifests.find(objects, Service.class, "net-kube-verdict-control-plane");
        assertThat(service.getMetadata().getNamespace()).isEqualTo("policy-system");
        assertThat(service.getSpec().getPorts())
                .extracting(ServicePort::getPort)
                .containsExactly(7443, 7100);
        assertThat(agentContainer(objects).getArgs())
                .contains("--control-plane=net-kube-verdict-control-plane.policy-system.svc:7443");
        ClusterRoleBinding binding =
                DeployManifests.find(objects, ClusterRoleBinding.class, "net-kube-verdict-control-plane");
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getName()).isEqualTo("net-kube-verdict-control-plane");
            assertThat(s.getNamespace()).isEqualTo("policy-system");
        });
        Container cp = DeployManifests.find(objects, Deployment.class, "net-kube-verdict-control-plane")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        assertThat(cp.getArgs()).contains("--listen=0.0.0.0:7443", "--metrics-bind-address=0.0.0.0:7100");
        assertThat(agentContainer(objects).getArgs())
                .contains("--metrics-bind-address=0.0.0.0:7101", "--inspect-listen=127.0.0.1:7102");
        assertThat(declaredAndProbedPorts(cp)).containsExactly(7443, 7100);
        assertThat(declaredAndProbedPorts(agentContainer(objects))).containsExactly(7101);
    }

    /** The container's ports, after checking that every probe asks one of them. */
    private static List<Integer> declaredAndProbedPorts(Container c) {
        List<Integer> ports =
                c.getPorts().stream().map(p -> p.getContainerPort()).toList();
        Stream.of(c.getStartupProbe(), c.getReadinessProbe(), c.getLivenessProbe())
                .filter(Objects::nonNull)
                .forEach(p -> assertThat(ports).as(c.getName() + " probe").contains(DeployManifestsTest.probePort(p)));
        return ports;
    }

    private static Container agentContainer(List<HasMetadata> objects) {
        return objects.stream()
                .filter(DaemonSet.class::isInstance)
                .map(DaemonSet.class::cast)
                .findFirst()
                .orElseThrow()
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
    }

    private static HasMetadata same(List<HasMetadata> objects, HasMetadata like) {
        return objects.stream()
                .filter(o -> key(o).equals(key(like)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + key(like)));
    }

    private static List<String> keys(List<HasMetadata> objects) {
        return objects.stream().map(HelmChartTest::key).toList();
    }

    private static String key(HasMetadata object) {
        return object.getKind() + "/" + object.getMetadata().getName();
    }

    /**
     * The object as YAML without what legitimately differs: who manages it (checked here) and
     * Helm's chart label; labels sorted (their order means nothing).
     */
    private static String comparable(HasMetadata object, String managedBy) {
        HasMetadata copy = DeployManifests.SERIALIZATION.clone(object);
        List<ObjectMeta> metadata = new ArrayList<>(List.of(copy.getMetadata()));
        PodTemplateSpec template = DeployManifests.podTemplate(copy);
        if (template != null) {
            metadata.add(template.getMetadata());
        }
        for (ObjectMeta meta : metadata) {
            Map<String, String> labels = new TreeMap<>(meta.getLabels());
            assertThat(labels).as(key(object)).containsEntry("app.kubernetes.io/managed-by", managedBy);
            labels.remove("app.kubernetes.io/managed-by");
            labels.remove("helm.sh/chart");
            meta.setLabels(labels);
        }
        return DeployManifests.SERIALIZATION.asYaml(copy);
    }
}
