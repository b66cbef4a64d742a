// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.beans.Introspector;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ModelSerializationTest {
    private static final KubernetesSerialization FULL = new KubernetesSerialization();

    /** A pod as `kubectl get -o yaml` shows it: most of it is what the calculation never reads. */
    static final String POD = """
            apiVersion: v1
            kind: Pod
            metadata:
              name: web-1
              namespace: shop
              labels: {app: web, tier: front}
              uid: 0b5c5f5e-1
              resourceVersion: "42"
              annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
              ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d, uid: r1, controller: true}]
              managedFields: [{manager: kubelet, operation: Update, fieldsType: FieldsV1, fieldsV1: {f:status: {}}}]
            spec:
              nodeName: n1
              hostNetwork: false
              affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
              tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
              volumes: [{name: data, persistentVolumeClaim: {claimName: data}}, {name: cfg, configMap: {name: cfg}}]
              initContainers:
              - name: proxy
                image: envoy
                restartPolicy: Always
                ports: [{name: admin, containerPort: 9901, protocol: TCP}]
              containers:
              - name: web
                image: nginx
                env: [{name: A, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]
                livenessProbe: {httpGet: {path: /, port: http}, periodSeconds: 5}
                resources: {limits: {cpu: 500m, memory: 128Mi}}
                volumeMounts: [{name: data, mountPath: /data}]
                ports: [{name: http, containerPort: 8080}, {name: dns, containerPort: 53, protocol: UDP}]
            status:
              phase: Running
              podIP: 10.0.1.5
              podIPs: [{ip: 10.0.1.5}, {ip: "fd00::105"}]
              hostIP: 192.168.0.1
              conditions: [{type: Ready, status: "True"}]
              containerStatuses: [{name: web, ready: true, restartCount: 0, image: nginx, imageID: x, state: {running: {startedAt: "2026-01-01T00:00:00Z"}}}]
            """;

    static final String NODE = """
            apiVersion: v1
            kind: Node
            metadata: {name: n1, labels: {zone: a}}
            spec: {podCIDR: 10.0.1.0/24, podCIDRs: [10.0.1.0/24, "fd00:1::/64"], taints: [{key: k, effect: NoSchedule}]}
            status:
              addresses: [{type: InternalIP, address: 192.168.0.1}, {type: Hostname, address: n1}, {type: InternalIP, address: "fd00::1"}]
              images: [{names: [nginx], sizeBytes: 1}]
              nodeInfo: {kubeletVersion: v1.31.0, machineID: m, systemUUID: s, bootID: b, kernelVersion: k, osImage: o, containerRuntimeVersion: c, kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}
            """;

    @Test
    void theCalculationSeesTheSamePodAndNodeAsFromTheWholeModel() {
        Pod whole = FULL.unmarshal(POD, Pod.class);
        Pod read = ModelSerialization.INSTANCE.unmarshal(POD, Pod.class);
        PodModel model = PodModel.of(read);
        assertThat(model).isEqualTo(PodModel.of(whole));
        assertThat(model.endpoint()).isTrue();
        assertThat(model.ips()).containsExactly("10.0.1.5", "fd00::105");
        assertThat(model.namedPorts())
                .extracting(PodModel.NamedPort::name)
                .containsExactlyInAnyOrder("http", "dns", "admin");

        Node node = ModelSerialization.INSTANCE.unmarshal(NODE, Node.class);
        assertThat(NodeModel.of(node)).isEqualTo(NodeModel.of(FULL.unmarshal(NODE, Node.class)));
        assertThat(NodeModel.of(node).addresses()).containsExactly("192.168.0.1", "fd00::1");
        assertThat(NodeModel.of(node).podCidrs()).containsExactly("10.0.1.0/24", "fd00:1::/64");
    }

    @Test
    void whatTheCalculationDoesNotReadIsSkippedNotKeptOrReportedAsUnknown() {
        Pod read = ModelSerialization.INSTANCE.unmarshal(
                POD.replace("hostNetwork: false", "hostNetwork: false\n  hostNetwrk: true"), Pod.class);
        assertThat(read.getSpec().getVolumes()).isEmpty();
        assertThat(read.getSpec().getAffinity()).isNull();
        assertThat(read.getSpec().getContainers().get(0).getLivenessProbe()).isNull();
        assertThat(read.getSpec().getContainers().get(0).getEnv()).isEmpty();
        assertThat(read.getStatus().getContainerStatuses()).isEmpty();
        assertThat(read.getSpec().getAdditionalProperties())
                .as("a misspelt field is still unknown")
                .containsOnlyKeys("hostNetwrk");
        assertThat(read.getStatus().getAdditionalProperties()).isEmpty();
        assertThat(FULL.unmarshal(POD, Pod.class).getSpec().getVolumes()).hasSize(2);

        ObjectMeta meta = read.getMetadata();
        assertThat(meta.getManagedFields()).isEmpty();
        assertThat(meta.getOwnerReferences()).isEmpty();
        assertThat(meta.getAnnotations()).isEmpty();
        assertThat(meta.getAdditionalProperties()).isEmpty();
        assertThat(FULL.unmarshal(POD, Pod.class).getMetadata().getManagedFields())
                .hasSize(1);
    }

    /** The readiness gate decides from the informer's pod: its gates and conditions are read. */
    @Test
    void aPodsReadinessGatesAndConditionsAreRead() {
        Pod read = ModelSerialization.INSTANCE.unmarshal(
                POD.replace(
                        "  nodeName: n1",
                        "  nodeName: n1\n  readinessGates: [{conditionType: kube-verdict.io/policy-enforced}]"),
                Pod.class);
        assertThat(read.getSpec().getReadinessGates())
                .extracting(g -> g.getConditionType())
                .containsExactly("kube-verdict.io/policy-enforced");
        assertThat(read.getStatus().getConditions())
                .isEqualTo(FULL.unmarshal(POD, Pod.class).getStatus().getConditions())
                .hasSize(1);
    }

    /** Of annotations only kube-verdict's own are read (the staged-policy ones); others are skipped. */
    @Test
    void onlyKubeVerdictsOwnAnnotationsAreKept() {
        ObjectMeta meta = ModelSerialization.INSTANCE
                .unmarshal(
                        POD.replace(
                                "annotations: {kubectl.kubernetes.io/last-applied-configuration: \"{}\"}",
                                "annotations: {kubectl.kubernetes.io/last-applied-configuration: \"{}\","
                                        + " kube-verdict.io/staged: \"true\", kube-verdict.io/staged-replaces: web}"),
                        Pod.class)
                .getMetadata();
        assertThat(meta.getAnnotations())
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("kube-verdict.io/staged", "true", "kube-verdict.io/staged-replaces", "web"));
    }

    /** What the informers and the calculation read of metadata; a misspelt name is still unknown. */
    @Test
    void metadataKeepsNamesLabelsAndVersions() {
        ObjectMeta meta = ModelSerialization.INSTANCE
                .unmarshal(POD.replace("  uid: 0b5c5f5e-1", "  uid: 0b5c5f5e-1\n  lables: {a: b}"), Pod.class)
                .getMetadata();
        assertThat(meta.getName()).isEqualTo("web-1");
        assertThat(meta.getNamespace()).isEqualTo("shop");
        assertThat(meta.getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of("app", "web", "tier", "front"));
        assertThat(meta.getUid()).isEqualTo("0b5c5f5e-1");
        assertThat(meta.getResourceVersion()).isEqualTo("42");
        assertThat(meta.getAdditionalProperties()).containsOnlyKeys("lables");
    }

    @Test
    void ofANamespaceOnlyItsMetadataIsRead() {
        String yaml = """
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop, labels: {team: a}, managedFields: [{manager: m, operation: Update}]}
                spec: {finalizers: [kubernetes]}
                status: {phase: Active, conditions: [{type: NamespaceDeletionDiscoveryFailure, status: "False"}]}
                """;
        Namespace read = ModelSerialization.INSTANCE.unmarshal(yaml, Namespace.class);
        assertThat(read.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of("team", "a"));
        assertThat(read.getSpec()).isNull();
        assertThat(read.getStatus()).isNull();
        assertThat(read.getAdditionalProperties()).isEmpty();
        assertThat(FULL.unmarshal(yaml, Namespace.class).getStatus().getPhase()).isEqualTo("Active");
    }

    @Test
    void aFieldOfTheWrongTypeFailsOnlyWhereTheCalculationReads() {
        Pod skipped = ModelSerialization.INSTANCE.unmarshal(
                POD.replace(
                        "volumes: [{name: data, persistentVolumeClaim: {claimName: data}}, {name: cfg, configMap: {name: cfg}}]",
                        "volumes: 5"),
                Pod.class);
        assertThat(PodModel.of(skipped)).isEqualTo(PodModel.of(FULL.unmarshal(POD, Pod.class)));
        assertThatThrownBy(() -> ModelSerialization.INSTANCE.unmarshal(
                        POD.replace("hostNetwork: false", "hostNetwork: [1]"), Pod.class))
                .isInstanceOf(RuntimeException.class);
    }

    @Test
    void writingIsUnchanged() {
        Pod pod = new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .endMetadata()
                .withNewSpec()
                .addNewVolume()
                .withName("v")
                .endVolume()
                .withNodeName("n1")
                .endSpec()
                .build();
        assertThat(ModelSerialization.INSTANCE.asJson(pod))
                .isEqualTo(FULL.asJson(pod))
                .contains("\"volumes\"");
    }

    /** A misspelt name in READ would silently drop a field the calculation needs. */
    @Test
    void everyReadNameIsAPropertyOfItsClass() {
        for (Map.Entry<Class<?>, Set<String>> e : ModelSerialization.READ.entrySet()) {
            Set<String> properties = Arrays.stream(e.getKey().getMethods())
                    .map(Method::getName)
                    .filter(n -> n.startsWith("get") && n.length() > 3)
                    .map(n -> Introspector.decapitalize(n.substring(3)))
                    .collect(Collectors.toSet());
            assertThat(properties).as(e.getKey().getSimpleName()).containsAll(e.getValue());
        }
    }
}
