// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PodModelTest {
    /** Found by ManifestLoaderFuzzTest: `containers: [~]` and `ports: [~]` are null list items. */
    @Test
    void nullContainersAndPortsNameNoPort() {
        Container withNullPort = new Container();
        withNullPort.setPorts(Arrays.asList(
                null,
                new ContainerPortBuilder()
                        .withName("http")
                        .withContainerPort(80)
                        .withProtocol("TCP")
                        .build()));
        Pod pod = new PodBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("a")
                .endMetadata()
                .withNewSpec()
                .withNodeName("n1")
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP("10.0.0.1")
                .endStatus()
                .build();
        pod.getSpec().setContainers(Arrays.asList(null, withNullPort));

        PodModel model = PodModel.of(pod);

        assertThat(model.namedPorts()).extracting(PodModel.NamedPort::name).containsExactly("http");
    }

    @Test
    void everyPhaseButSucceededAndFailedIsAnEndpoint() {
        for (String phase : new String[] {null, "", "Pending", "Running", "Unknown", "SomethingNew"}) {
            assertThat(PodModel.of(scheduledWithAddress(phase)).endpoint())
                    .as("phase %s", phase)
                    .isTrue();
        }
        for (String phase : new String[] {"Succeeded", "Failed"}) {
            assertThat(PodModel.of(scheduledWithAddress(phase)).endpoint())
                    .as("phase %s", phase)
                    .isFalse();
        }
    }

    private static Pod scheduledWithAddress(String phase) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("a")
                .endMetadata()
                .withNewSpec()
                .withNodeName("n1")
                .endSpec()
                .withNewStatus()
                .withPhase(phase)
                .withPodIP("10.0.0.1")
                .endStatus()
                .build();
    }
}
