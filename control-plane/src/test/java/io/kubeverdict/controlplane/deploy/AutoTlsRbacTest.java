// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kubeverdict.controlplane.autotls.AutoTls;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.testing.tier.MockApiTest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The control plane's namespaced Role is what auto TLS really does: its requests against the mock
 * API server — a first start on the empty Secret and ConfigMap the base ships (fill them), then a
 * start over a Secret and a ConfigMap that were tampered with (replace) — need exactly the verbs
 * the Role grants, every request names the one object the Role names, and nothing is created
 * (audit L8: no create in the namespace).
 */
@MockKubernetes
@MockApiTest
class AutoTlsRbacTest {
    private static final String USER_AGENT = "kube-verdict-auto-tls-under-test";
    private static final String NS = "kube-verdict";

    KubernetesMockServer server;
    KubernetesClient client;

    @Test
    void theRoleGrantsExactlyWhatAutoTlsUses() throws Exception {
        AutoTls.Settings settings =
                AutoTls.Settings.defaults(NS, AutoTls.Settings.serviceNames("kube-verdict-control-plane", NS));
        List<RecordedRequest> requests = new ArrayList<>();
        try (KubernetesClient underTest = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withUserAgent(USER_AGENT)
                        .build())
                .build()) {
            // What `kubectl apply -k deploy/` puts there before the control plane starts.
            for (HasMetadata shipped : List.of(
                    DeployManifests.find(Secret.class, AutoTls.Settings.DEFAULT_SECRET),
                    DeployManifests.find(ConfigMap.class, AutoTls.Settings.DEFAULT_CONFIG_MAP))) {
                client.resource(shipped).inNamespace(NS).create();
            }
            AutoTls.start(underTest, settings, Clock.systemUTC()).close();
            client.secrets()
                    .inNamespace(NS)
                    .resource(new SecretBuilder()
                            .withNewMetadata()
                            .withName(AutoTls.Settings.DEFAULT_SECRET)
                            .withNamespace(NS)
                            .endMetadata()
                            .withType("Opaque")
                            .addToStringData("tls.crt", "x")
                            .addToStringData("tls.key", "y")
                            .build())
                    .update();
            client.configMaps()
                    .inNamespace(NS)
                    .resource(new ConfigMapBuilder()
                            .withNewMetadata()
                            .withName(AutoTls.Settings.DEFAULT_CONFIG_MAP)
                            .withNamespace(NS)
                            .endMetadata()
                            .addToData("ca.crt", "stale")
                            .build())
                    .update();
            AutoTls.start(underTest, settings, Clock.systemUTC()).close();
        }
        for (RecordedRequest r; (r = server.takeRequest(200, TimeUnit.MILLISECONDS)) != null; ) {
            if (USER_AGENT.equals(r.getHeader("User-Agent"))) {
                requests.add(r);
            }
        }

        Set<ApiAccess> used = new TreeSet<>();
        for (RecordedRequest r : requests) {
            assertThat(r.getPath())
                    .as("namespaced to the control plane's own")
                    .startsWith("/api/v1/namespaces/" + NS + "/");
            used.add(ApiAccess.ofRequest(r.getMethod(), r.getPath()));
        }
        Role role = DeployManifests.find(Role.class, "kube-verdict-control-plane");
        assertThat(used).containsExactlyInAnyOrderElementsOf(ApiAccess.grantedBy(role));
        for (RecordedRequest r : requests) {
            assertThat(r.getMethod()).as("nothing is created").isNotEqualTo("POST");
            ApiAccess access = ApiAccess.ofRequest(r.getMethod(), r.getPath());
            List<String> names = role.getRules().stream()
                    .filter(rule -> rule.getResources().contains(access.resource())
                            && rule.getVerbs().contains(access.verb()))
                    .map(PolicyRule::getResourceNames)
                    .flatMap(List::stream)
                    .toList();
            assertThat(names)
                    .as("the Role names the object of %s %s", r.getMethod(), r.getPath())
                    .isNotEmpty();
            assertThat(r.getPath().split("\\?")[0]).endsWith("/" + names.get(0));
        }
    }
}
