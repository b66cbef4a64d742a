// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Which kinds the loader reads, skips or refuses: a typo in a policy's kind or apiVersion never opens a namespace. */
class ManifestLoaderKindsTest {
    private static final String NAMESPACE = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            """;

    private static String object(String apiVersion, String kind) {
        return """
                apiVersion: %s
                kind: %s
                metadata: {namespace: x, name: o}
                """.formatted(apiVersion, kind);
    }

    private static ManifestLoadException refused(String text) {
        ManifestLoadException e =
                catchThrowableOfType(ManifestLoadException.class, () -> new ManifestLoader().loadText("m.yaml", text));
        assertThat(e).as("refused").isNotNull();
        return e;
    }

    @Test
    void aMisspeltKindOnADenyAllIsAnErrorWithItsPlace() {
        ManifestLoadException e = refused(NAMESPACE + """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicie
                metadata: {namespace: x, name: deny-all}
                spec: {podSelector: {}}
                """);
        assertThat(e.errors())
                .singleElement()
                .asString()
                .startsWith("m.yaml:5:1 (document 2): ")
                .contains("\"NetworkPolicie\" is not a kind kube-verdict reads")
                .contains("NetworkPolicy");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "v1, NetworkPolicy",
        "networking.k8s.io/v1beta1, NetworkPolicy",
        "extensions/v1beta1, NetworkPolicy",
        "policy.networking.k8s.io/v1alpha2, AdminNetworkPolicy",
        "policy.networking.k8s.io/v1beta1, ClusterNetworkPolicy",
        "apps/v1, Pod",
        "v2, Namespace",
    })
    void aKnownKindOfAnotherApiVersionIsAnError(String apiVersion, String kind) {
        assertThat(refused(NAMESPACE + object(apiVersion, kind)).getMessage())
                .startsWith("m.yaml:5:1 (document 2): " + kind + " of apiVersion " + apiVersion + " is not read");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "policy.networking.k8s.io/v1alpha1, AdminNetworkPolicyRule",
        "policy.networking.k8s.io/v1, Anything",
        "networking.k8s.io/v1, NetworkPolicyRule",
        "networking.k8s.io/v1, EgressPolicy",
    })
    void anUnknownKindOfAPolicyGroupIsAnError(String apiVersion, String kind) {
        assertThat(refused(object(apiVersion, kind)).getMessage())
                .startsWith("m.yaml:1:1 (document 1): " + apiVersion + " " + kind + " is not read");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "NetworkPolicies",
                "NetworkPolicys",
                "networkpolicy",
                "NETWORKPOLICY",
                "NetwrokPolicy",
                "NetworkPolcy",
                "NetworkPolicyy",
                "AdminNetworkPolicies",
                "BaselineAdminNetworkPolcy",
                "ClusterNetworkPolicie",
                "Pods",
                "pod",
                "Pdo",
                "Namespaces",
                "NameSpace",
                "Nmaespace",
                "Nodes",
                "node"
            })
    void aNearMissOfAReadKindIsAnErrorInAnyGroup(String kind) {
        for (String apiVersion : new String[] {"v1", "example.com/v1", "networking.k8s.io/v1"}) {
            assertThat(refused(object(apiVersion, kind)).getMessage())
                    .as(apiVersion)
                    .startsWith("m.yaml:1:1 (document 1): ")
                    .contains(kind);
        }
    }

    @Test
    void aMisspeltKindInsideATypedListIsAnErrorAtItsItem() {
        ManifestLoadException e = refused("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicieList
                items:
                - metadata: {namespace: x, name: deny-all}
                  spec: {podSelector: {}}
                """);
        assertThat(e.getMessage()).startsWith("m.yaml:4:3 (document 1): ").contains("\"NetworkPolicie\"");
    }

    @Test
    void otherKindsAreSkippedAndListedOnceNotWarnedAbout() throws Exception {
        LoadedManifests m = new ManifestLoader()
                .loadText(
                        "app.yaml",
                        NAMESPACE
                                + object("apps/v1", "Deployment") + "---\n"
                                + object("v1", "Service") + "---\n"
                                + object("apps/v1", "Deployment").replace("name: o", "name: p") + "---\n"
                                + """
                apiVersion: v1
                kind: List
                items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]
                """);
        assertThat(m.namespaces()).hasSize(1);
        assertThat(m.problems()).isEmpty();
        assertThat(m.skipped().summary())
                .isEqualTo("skipped 4 objects of kinds not read: Deployment x2, Service, ConfigMap");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "batch/v1, Job",
        "rbac.authorization.k8s.io/v1, Role",
        "v1, ServiceAccount",
        "v1, Endpoints",
        "networking.k8s.io/v1, Ingress",
        "networking.k8s.io/v1beta1, Ingress",
        "networking.k8s.io/v1, IngressClass",
        "networking.k8s.io/v1, IngressClassList",
        "networking.k8s.io/v1, ServiceCIDR",
        "networking.k8s.io/v1beta1, IPAddress",
        "monitoring.coreos.com/v1, PodMonitor",
        "policy/v1, PodDisruptionBudget",
        "storage.k8s.io/v1, CSINode",
        "cilium.io/v2, CiliumNetworkPolicy",
        "kyverno.io/v1, ClusterPolicy",
        "kyverno.io/v1, Policy",
        "projectcalico.org/v3, GlobalNetworkPolicy",
    })
    void commonKindsAreNoNearMisses(String apiVersion, String kind) throws Exception {
        LoadedManifests m = new ManifestLoader().loadText("m.yaml", object(apiVersion, kind));
        assertThat(m.problems()).isEmpty();
        assertThat(m.skipped().summary()).isEqualTo("skipped 1 object of kinds not read: " + kind);
    }

    @Test
    void nothingSkippedSaysNothing() throws Exception {
        assertThat(new ManifestLoader().loadText("m.yaml", NAMESPACE).skipped().summary())
                .isEmpty();
    }
}
