package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Unknown fields and invalid labels as the loader reports them: with file, document and path. */
class ManifestLintTest {
    private static List<String> problems(String yaml) throws ManifestLoadException {
        return new ManifestLoader().loadText("p.yaml", yaml).problems().stream().map(Object::toString).toList();
    }

    @Test
    void typosInAPolicyAreReportedWithTheirPath() throws Exception {
        List<String> problems = problems("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: web}
                spec:
                  podSelectr: {matchLabels: {app: web}}
                  ingres: []
                  ingress:
                  - from:
                    - podSelector: {matchLabels: {app: db}, matchLabel: {}}
                    ports: [{port: 80, protocl: TCP}]
                """);
        assertThat(problems).contains(
                "p.yaml document 1: NetworkPolicy x/web: spec.ingres: unknown field (ignored; check the spelling)",
                "p.yaml document 1: NetworkPolicy x/web: spec.podSelectr: unknown field (ignored; check the spelling)",
                "p.yaml document 1: NetworkPolicy x/web: spec.ingress[0].from[0].podSelector.matchLabel: unknown field "
                        + "(ignored; check the spelling)",
                "p.yaml document 1: NetworkPolicy x/web: spec.ingress[0].ports[0].protocl: unknown field "
                        + "(ignored; check the spelling)");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "metadata: {name: a, namespace: x, labels: {'bad key!': v}}|Pod x/a: metadata.labels[\"bad key!\"]: invalid label key",
            "metadata: {name: a, namespace: x, labels: {app: 'no spaces'}}|Pod x/a: metadata.labels[\"app\"]: invalid label value \"no spaces\"",
            "metadata: {name: a, namespace: x, labels: {app: ''}}|",
            "metadata: {name: a, namespace: x, labels: {example.com/app: web-1}}|"})
    void labelKeysAndValuesAreCheckedByFabric8sRules(String metadata, String expected) throws Exception {
        List<String> problems = problems("apiVersion: v1\nkind: Pod\n" + metadata + "\n");
        if (expected == null) {
            assertThat(problems).isEmpty();
        } else {
            assertThat(problems).containsExactly("p.yaml document 1: " + expected);
        }
    }

    @Test
    void selectorsOfPoliciesAreCheckedToo() throws Exception {
        List<String> problems = problems("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: p}
                spec:
                  podSelector:
                    matchExpressions: [{key: 'tier!', operator: In, values: [web, 'a b']}]
                """);
        assertThat(problems).contains(
                "p.yaml document 1: NetworkPolicy x/p: spec.podSelector.matchExpressions[0].key: invalid label key \"tier!\"",
                "p.yaml document 1: NetworkPolicy x/p: spec.podSelector.matchExpressions[0].values[1]: invalid label value \"a b\"");
    }

    @Test
    void aCleanPolicyHasNoProblems() throws Exception {
        assertThat(problems("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: p, labels: {team: a}}
                spec:
                  podSelector: {matchLabels: {app: web}}
                  policyTypes: [Ingress]
                  ingress: [{from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: y}}}], ports: [{port: 80}]}]
                """)).isEmpty();
    }
}
