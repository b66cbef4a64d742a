// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** deploy/helm/kube-verdict, linted and rendered by helm's own code (helm-java: helm as a native library). */
final class HelmChart {
    static final String RELEASE = "kube-verdict";
    static final String NAMESPACE = "kube-verdict";

    private HelmChart() {}

    static Path dir() {
        return DeployManifests.deployDir().resolve("helm/kube-verdict");
    }

    /** `helm lint --strict`: warnings fail too. */
    static LintResult lint() {
        return new Helm(dir()).lint().strict().call();
    }

    /** `helm template kube-verdict deploy/helm/kube-verdict -n kube-verdict -f values`, typed. */
    static List<HasMetadata> template(String valuesYaml) {
        return template(RELEASE, NAMESPACE, valuesYaml);
    }

    static List<HasMetadata> template(String release, String namespace, String valuesYaml) {
        return Kustomize.documents(templateText(release, namespace, valuesYaml)).stream()
                .map(DeployManifests::typed)
                .toList();
    }

    static String templateText(String release, String namespace, String valuesYaml) {
        try {
            Path values = Files.createTempFile("kube-verdict-values", ".yaml");
            try {
                Files.writeString(values, valuesYaml);
                TemplateCommand template = new Helm(dir())
                        .template()
                        .withName(release)
                        .withNamespace(namespace)
                        .withValuesFile(values);
                return template.call();
            } finally {
                Files.delete(values);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
