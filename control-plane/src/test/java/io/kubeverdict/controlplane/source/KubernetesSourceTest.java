// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.testing.tier.MockApiTest;
import java.util.Map;
import org.junit.jupiter.api.Test;

@MockKubernetes
@MockApiTest
class KubernetesSourceTest {
    KubernetesMockServer server;
    KubernetesClient client;

    static Pod pod(String ns, String name, String node, String ip, Map<String, String> labels) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withLabels(labels)
                .withManagedFields(new ManagedFieldsEntryBuilder()
                        .withManager("kubectl")
                        .withOperation("Apply")
                        .build())
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .addNewContainer()
                .withName("c")
                .withImage("i")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    @Test
    void informersDeliverInitialStateThenChanges() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
                .create();
        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .resource(new NetworkPolicyBuilder()
                        .withNewMetadata()
                        .withNamespace("x")
                        .withName("p")
                        .endMetadata()
                        .withNewSpec()
                        .withNewPodSelector()
                        .endPodSelector()
                        .endSpec()
                        .build())
                .create();

        RecordingSink sink = new RecordingSink();
        try (KubernetesSource source = new KubernetesSource(client, sink, 0)) {
            source.start().get(30, java.util.concurrent.TimeUnit.SECONDS);
            // Every initial object arrives before the sync marker.
            assertThat(sink.synced).containsExactly("kubernetes");
            assertThat(sink.log()).containsExactlyInAnyOrder("ns+x", "pod+x/a", "np+x/p");

            client.pods()
                    .inNamespace("x")
                    .withName("a")
                    .edit(p -> new PodBuilder(p)
                            .editMetadata()
                            .addToLabels("app", "changed")
                            .endMetadata()
                            .build());
            await(() -> sink.log().size() == 4, "label update");
            assertThat(sink.log().get(3)).isEqualTo("pod+x/a");
            assertThat(sink.calc.snapshot("n1").getEndpoints(0).getEndpoint().getLabelsMap())
                    .containsEntry("app", "changed");

            client.pods()
                    .inNamespace("x")
                    .resource(pod("x", "b", "n2", "10.0.0.2", Map.of()))
                    .create();
            client.network()
                    .v1()
                    .networkPolicies()
                    .inNamespace("x")
                    .withName("p")
                    .delete();
            client.pods().inNamespace("x").withName("a").delete();
            client.namespaces().withName("x").delete();
            await(() -> sink.log().size() == 8, "creates and deletes");
            // Separate informers: no order across kinds.
            assertThat(sink.log().subList(4, 8)).containsExactlyInAnyOrder("pod+x/b", "np-x/p", "pod-x/a", "ns-x");
            assertThat(sink.kinds).contains("pod/upsert", "pod/delete", "networkpolicy/delete", "namespace/delete");
        }
    }

    @Test
    void theControlPlanesClientDeliversWhatTheCalculationReadsOfAWholePod() throws Exception {
        Pod whole = new PodBuilder(pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
                .editSpec()
                .addNewVolume()
                .withName("data")
                .withNewEmptyDir()
                .endEmptyDir()
                .endVolume()
                .editFirstContainer()
                .addNewPort()
                .withName("http")
                .withContainerPort(8080)
                .endPort()
                .addNewEnv()
                .withName("A")
                .withValue("1")
                .endEnv()
                .endContainer()
                .endSpec()
                .editStatus()
                .addNewPodIP()
                .withIp("10.0.0.1")
                .endPodIP()
                .addNewPodIP()
                .withIp("fd00::1")
                .endPodIP()
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .endCondition()
                .withHostIP("192.168.0.1")
                .endStatus()
                .build();
        client.pods().inNamespace("x").resource(whole).create();
        Pod[] seen = new Pod[1];
        ClusterEventSink capture = lastPodInto(seen);
        try (KubernetesClient reading = ModelSerialization.client(client.getConfiguration());
                KubernetesSource source = new KubernetesSource(reading, capture, 0)) {
            source.start().get(30, java.util.concurrent.TimeUnit.SECONDS);
            await(() -> seen[0] != null, "the pod");
        }
        assertThat(PodModel.of(seen[0]))
                .isEqualTo(
                        PodModel.of(client.pods().inNamespace("x").withName("a").get()));
        assertThat(PodModel.of(seen[0]).ips()).containsExactly("10.0.0.1", "fd00::1");
        assertThat(PodModel.of(seen[0]).namedPorts())
                .extracting(PodModel.NamedPort::name)
                .containsExactly("http");
        assertThat(seen[0].getSpec().getVolumes()).isEmpty();
        assertThat(seen[0].getSpec().getContainers().get(0).getEnv()).isEmpty();
        assertThat(seen[0].getStatus().getHostIP()).isNull();
        assertThat(seen[0].getStatus().getConditions())
                .as("read for the readiness gate")
                .extracting(c -> c.getType())
                .containsExactly("Ready");
        assertThat(seen[0].getMetadata().getManagedFields()).isNullOrEmpty();
        assertThat(seen[0].getMetadata().getResourceVersion()).isNotEmpty();
    }

    @Test
    void managedFieldsAreTrimmedBeforeTheCalculationSeesThem() throws Exception {
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "a", "n1", "10.0.0.1", Map.of()))
                .create();
        assertThat(client.pods()
                        .inNamespace("x")
                        .withName("a")
                        .get()
                        .getMetadata()
                        .getManagedFields())
                .isNotEmpty();
        Pod[] seen = new Pod[1];
        ClusterEventSink capture = lastPodInto(seen);
        try (KubernetesSource source = new KubernetesSource(client, capture, 0)) {
            source.start().get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(seen[0]).isNotNull();
            assertThat(seen[0].getMetadata().getManagedFields()).isNullOrEmpty();
        }
    }

    /** A sink that keeps the last pod the calculation would have been given. */
    private static ClusterEventSink lastPodInto(Pod[] seen) {
        return new ClusterEventSink() {
            @Override
            public void change(
                    String kind, java.util.function.Consumer<io.kubeverdict.controlplane.calc.PolicyCalculator> c) {
                c.accept(new io.kubeverdict.controlplane.service.TestDoubleCalculator() {
                    @Override
                    public void upsertPod(Pod pod) {
                        seen[0] = pod;
                    }
                });
            }

            @Override
            public void sourceSynced(String source) {}

            @Override
            public void sourceRevision(String source, String revision) {}
        };
    }
}
