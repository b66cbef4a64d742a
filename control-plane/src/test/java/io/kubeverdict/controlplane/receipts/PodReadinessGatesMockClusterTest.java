// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.testing.tier.MockApiTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The readiness gate's write against fabric8's mock API server (CRUD), with the pod as the control
 * plane's informer holds it (read with {@link ModelSerialization}: no managedFields, no foreign
 * annotations, no container statuses): only the one condition is written, through pods/status, and
 * a condition the kubelet wrote after the informer's copy is kept.
 */
@MockKubernetes
@MockApiTest
class PodReadinessGatesMockClusterTest {
    KubernetesMockServer server;
    KubernetesClient client;

    private KubernetesClient reading; // the control plane's client: reads partial objects
    private final AtomicReference<Pod> informer = new AtomicReference<>();
    private PodReadinessGates gates;

    @BeforeEach
    void setUp() {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        reading = ModelSerialization.client(client.getConfiguration());
        SnapshotHub hub = new SnapshotHub();
        hub.publish(
                NodeSnapshot.newBuilder()
                        .setNode("n1")
                        .addEndpoints(Endpoint.newBuilder()
                                .setId(EndpointId.newBuilder().setNamespace("x").setPod("a"))
                                .setEndpoint(WorkloadEndpoint.newBuilder().addIps("10.0.1.1")))
                        .build(),
                0);
        PolicyReceipts receipts = new PolicyReceipts();
        receipts.applied("n1", hub.current("n1").version(), 0);
        gates = new PodReadinessGates(reading, hub, receipts, () -> Set.of("n1"), (ns, name) -> {
            Pod p = informer.get();
            return p != null
                            && ns.equals(p.getMetadata().getNamespace())
                            && name.equals(p.getMetadata().getName())
                    ? p
                    : null;
        });
    }

    @AfterEach
    void tearDown() {
        gates.close();
        reading.close();
    }

    /** A pod as a real cluster has it: most of it is what the control plane does not read. */
    private Pod create(List<PodCondition> conditions) {
        return client.pods()
                .inNamespace("x")
                .resource(new PodBuilder()
                        .withMetadata(new ObjectMetaBuilder()
                                .withName("a")
                                .withNamespace("x")
                                .addToLabels("app", "a")
                                .addToAnnotations(
                                        "kubectl.kubernetes.io/last-applied-configuration", "{\"kind\":\"Pod\"}")
                                .addToAnnotations("team", "shop")
                                .addNewOwnerReference()
                                .withApiVersion("apps/v1")
                                .withKind("ReplicaSet")
                                .withName("a-7d")
                                .withUid("r1")
                                .withController(true)
                                .endOwnerReference()
                                .withManagedFields(new ManagedFieldsEntryBuilder()
                                        .withManager("kubectl")
                                        .withOperation("Update")
                                        .withApiVersion("v1")
                                        .build())
                                .build())
                        .withNewSpec()
                        .withNodeName("n1")
                        .addNewReadinessGate(PodReadinessGates.CONDITION)
                        .addNewContainer()
                        .withName("web")
                        .withImage("nginx")
                        .addNewEnv()
                        .withName("A")
                        .withValue("1")
                        .endEnv()
                        .endContainer()
                        .addNewVolume()
                        .withName("data")
                        .withNewEmptyDir()
                        .endEmptyDir()
                        .endVolume()
                        .endSpec()
                        .withNewStatus()
                        .withPhase("Running")
                        .withPodIP("10.0.1.1")
                        .withHostIP("192.168.0.1")
                        .withConditions(conditions)
                        .addNewContainerStatus()
                        .withName("web")
                        .withReady(true)
                        .withRestartCount(0)
                        .withImage("nginx")
                        .withImageID("x")
                        .endContainerStatus()
                        .endStatus()
                        .build())
                .create();
    }

    private Pod onServer() {
        return client.pods().inNamespace("x").withName("a").get();
    }

    private void informerSees() {
        informer.set(reading.pods().inNamespace("x").withName("a").get());
    }

    private static PodCondition condition(String type, String status) {
        return new PodConditionBuilder()
                .withType(type)
                .withStatus(status)
                .withLastTransitionTime("2026-01-01T00:00:00Z")
                .build();
    }

    private static List<String> types(Pod pod) {
        return pod.getStatus().getConditions().stream()
                .map(c -> c.getType() + "=" + c.getStatus())
                .toList();
    }

    private static ObjectMeta withoutVersion(ObjectMeta meta) {
        return new ObjectMetaBuilder(meta).withResourceVersion(null).build();
    }

    /** The writes sent since the last call (the test's own reads left out). */
    private List<RecordedRequest> requests() throws InterruptedException {
        List<RecordedRequest> out = new ArrayList<>();
        for (RecordedRequest r; (r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null; ) {
            if (!r.getMethod().equals("GET")) {
                out.add(r);
            }
        }
        return out;
    }

    @Test
    void onlyTheConditionIsPatchedAndTheKubeletsConcurrentConditionIsKept() throws Exception {
        Pod created = create(List.of(condition("PodScheduled", "True")));
        informerSees();
        assertThat(PodReadinessGates.gated(informer.get()))
                .as("the control plane's serialization reads the gate")
                .isTrue();
        // The kubelet marks the pod Ready after the informer's copy was taken.
        client.pods()
                .inNamespace("x")
                .withName("a")
                .editStatus(p -> new PodBuilder(p)
                        .editStatus()
                        .addToConditions(condition("Ready", "True"))
                        .endStatus()
                        .build());
        requests();

        gates.sweep();
        List<RecordedRequest> sent = requests();
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0).getMethod()).isEqualTo("PATCH");
        assertThat(sent.get(0).getPath()).isEqualTo("/api/v1/namespaces/x/pods/a/status");
        assertThat(sent.get(0).getHeader("Content-Type")).startsWith("application/json-patch+json");
        assertThat(types(onServer()))
                .as("a patch from the stale copy is refused, not merged over the kubelet's write")
                .containsExactly("PodScheduled=True", "Ready=True");

        gates.sweep();
        assertThat(requests())
                .as("not tried again at the refused resourceVersion")
                .isEmpty();

        informerSees(); // the informer catches up
        gates.sweep();
        Pod after = onServer();
        assertThat(types(after))
                .containsExactly("PodScheduled=True", "Ready=True", PodReadinessGates.CONDITION + "=True");
        PodCondition set = after.getStatus().getConditions().get(2);
        assertThat(set.getReason()).isEqualTo("PolicyEnforced");
        assertThat(set.getLastTransitionTime()).isNotBlank();
        // Nothing the informer's partial copy lacks was lost: spec, metadata, the rest of the status.
        assertThat(after.getSpec()).isEqualTo(created.getSpec());
        assertThat(withoutVersion(after.getMetadata())).isEqualTo(withoutVersion(created.getMetadata()));
        assertThat(after.getMetadata().getAnnotations())
                .containsKeys("kubectl.kubernetes.io/last-applied-configuration", "team");
        assertThat(after.getMetadata().getManagedFields()).hasSize(1);
        assertThat(after.getStatus().getContainerStatuses())
                .isEqualTo(created.getStatus().getContainerStatuses());
        assertThat(after.getStatus().getHostIP()).isEqualTo("192.168.0.1");

        requests();
        informerSees();
        gates.sweep();
        assertThat(requests()).as("set once").isEmpty();
    }

    @Test
    void aConditionPresentButNotTrueIsReplacedInPlace() throws Exception {
        create(List.of(
                condition("Ready", "False"),
                condition(PodReadinessGates.CONDITION, "False"),
                condition("ContainersReady", "True")));
        informerSees();
        gates.sweep();
        assertThat(types(onServer()))
                .containsExactly("Ready=False", PodReadinessGates.CONDITION + "=True", "ContainersReady=True");
    }

    @Test
    void aPodWithoutConditionsGetsTheList() {
        create(List.of());
        informerSees();
        gates.sweep();
        assertThat(types(onServer())).containsExactly(PodReadinessGates.CONDITION + "=True");
    }

    @Test
    void thePatchTestsTheResourceVersionBeforeItAddsTheCondition() {
        Pod pod = new PodBuilder()
                .withNewMetadata()
                .withName("a")
                .withResourceVersion("7")
                .endMetadata()
                .withNewStatus()
                .addToConditions(condition("Ready", "True"))
                .endStatus()
                .build();
        List<Map<String, Object>> ops = PodReadinessGates.patch(pod);
        assertThat(ops).hasSize(2);
        assertThat(ops.get(0)).containsEntry("op", "test").containsEntry("path", "/metadata/resourceVersion");
        assertThat(ops.get(0)).containsEntry("value", "7");
        assertThat(ops.get(1)).containsEntry("op", "add").containsEntry("path", "/status/conditions/-");
    }
}
