// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkloadsTest {
    @Test
    void aDeploymentsPodIsItsDeploymentByThePodTemplateHash() {
        assertThat(Workloads.workloadName("web-7d4b9c5f6-x2x9z", Map.of("pod-template-hash", "7d4b9c5f6")))
                .isEqualTo("web");
    }

    @Test
    void aStatefulSetsPodLosesItsOrdinal() {
        assertThat(Workloads.workloadName("db-12", Map.of("statefulset.kubernetes.io/pod-name", "db-12")))
                .isEqualTo("db");
    }

    @Test
    void aDaemonSetsPodLosesItsRandomSuffix() {
        assertThat(Workloads.workloadName("agent-k8x2p", Map.of("controller-revision-hash", "5f7c")))
                .isEqualTo("agent");
    }

    @Test
    void aPodWithoutControllerLabelsIsItsOwnWorkload() {
        assertThat(Workloads.workloadName("client-k8x2p", Map.of("app", "client")))
                .isEqualTo("client-k8x2p");
    }

    @Test
    void stableLabelsLeaveOutRevisionAndPodLabels() {
        assertThat(Workloads.stableLabels(Map.of(
                        "app", "web",
                        "pod-template-hash", "7d4b9c5f6",
                        "controller-revision-hash", "1",
                        "statefulset.kubernetes.io/pod-name", "db-0")))
                .containsExactly(Map.entry("app", "web"));
    }
}
