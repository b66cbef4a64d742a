package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeployManifestsTest {

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
                List<String> unknown = new ArrayList<>();
                collectUnknownFields(object, object.getKind() + "/" + object.getMetadata().getName(), unknown);
                assertThat(unknown).as(file + ": fields fabric8's model does not know").isEmpty();
                objects++;
            }
        }
        assertThat(objects).isGreaterThanOrEqualTo(8);
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
    void agentRunsWithOnlyTheCapabilitiesItNeedsAndNoApiAccess() throws Exception {
        DaemonSet agent = DeployManifests.find(DaemonSet.class, "kube-verdict-agent");
        var pod = agent.getSpec().getTemplate().getSpec();
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getPriorityClassName()).isEqualTo("system-node-critical");
        var security = pod.getContainers().get(0).getSecurityContext();
        assertThat(security.getPrivileged()).isFalse();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(security.getCapabilities().getAdd()).containsExactlyInAnyOrder("NET_ADMIN", "NET_RAW");
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("NODE_NAME");
            assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
        });
    }

    @Test
    void controlPlaneIsReplicatedNonRootAndReadOnly() throws Exception {
        Deployment cp = DeployManifests.find(Deployment.class, "kube-verdict-control-plane");
        assertThat(cp.getSpec().getReplicas()).isEqualTo(2);
        var pod = cp.getSpec().getTemplate().getSpec();
        assertThat(pod.getAffinity().getPodAntiAffinity()).isNotNull();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        var container = pod.getContainers().get(0);
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(container.getReadinessProbe().getGrpc()).isNotNull();
    }

    /** Walks fabric8 model getters; unknown YAML fields land in additionalProperties. */
    private static void collectUnknownFields(Object node, String path, List<String> unknown) throws Exception {
        if (node == null || !node.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || !getter.getName().startsWith("get") || getter.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value = getter.invoke(node);
            String child = path + "." + getter.getName().substring(3);
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    unknown.add(path + ": " + extra.keySet());
                }
            } else if (value instanceof Collection<?> items) {
                int i = 0;
                for (Object item : items) {
                    collectUnknownFields(item, child + "[" + i++ + "]", unknown);
                }
            } else if (value instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    collectUnknownFields(e.getValue(), child + "[" + e.getKey() + "]", unknown);
                }
            } else {
                collectUnknownFields(value, child, unknown);
            }
        }
    }
}
