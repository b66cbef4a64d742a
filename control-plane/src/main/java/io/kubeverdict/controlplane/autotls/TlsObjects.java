// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The two objects auto TLS keeps in the control plane's namespace: the Secret with the CA and
 * serving material (read, created, replaced only at the resourceVersion read, so replicas that
 * race cannot overwrite each other: the loser gets a conflict and reads again) and the ConfigMap
 * with the CA bundle the agents mount.
 */
final class TlsObjects {
    static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    static final String BUNDLE_KEY = "ca.crt";

    /** A Secret's decoded data and the version it was read at. */
    record Stored(Map<String, String> data, String resourceVersion) {}

    private final KubernetesClient client;
    private final String namespace;
    private final String secretName;
    private final String configMapName;

    TlsObjects(KubernetesClient client, String namespace, String secretName, String configMapName) {
        this.client = client;
        this.namespace = namespace;
        this.secretName = secretName;
        this.configMapName = configMapName;
    }

    String secretPlace() {
        return "Secret " + namespace + "/" + secretName;
    }

    String configMapPlace() {
        return "ConfigMap " + namespace + "/" + configMapName;
    }

    /** null when there is no such Secret. */
    Stored readSecret() {
        Secret s = client.secrets().inNamespace(namespace).withName(secretName).get();
        if (s == null) {
            return null;
        }
        Map<String, String> data = new LinkedHashMap<>();
        if (s.getData() != null) {
            s.getData().forEach((k, v) -> data.put(k, decode(v)));
        }
        if (s.getStringData() != null) {
            data.putAll(s.getStringData());
        }
        return new Stored(data, s.getMetadata().getResourceVersion());
    }

    private static String decode(String base64) {
        try {
            return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return ""; // not base64: the material check reports the key as unusable
        }
    }

    /** Creates the Secret, or replaces it at {@code resourceVersion}; a conflict is a KubernetesClientException 409. */
    void writeSecret(Map<String, String> data, String resourceVersion) {
        Map<String, String> encoded = new LinkedHashMap<>();
        data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
        Secret secret = new SecretBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(secretName)
                .withResourceVersion(resourceVersion)
                .addToLabels(MANAGED_BY, "kube-verdict-control-plane")
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(encoded)
                .build();
        if (resourceVersion == null) {
            client.secrets().inNamespace(namespace).resource(secret).create();
        } else {
            client.secrets().inNamespace(namespace).resource(secret).update();
        }
    }

    /** The bundle the ConfigMap holds; null when it does not exist. */
    String readBundle() {
        ConfigMap cm = client.configMaps()
                .inNamespace(namespace)
                .withName(configMapName)
                .get();
        return cm == null || cm.getData() == null ? null : cm.getData().get(BUNDLE_KEY);
    }

    /** Creates or replaces the ConfigMap (it is derived from the Secret: last writer wins, all write the same). */
    void writeBundle(String pem, boolean exists) {
        ConfigMap cm = new ConfigMapBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(configMapName)
                .addToLabels(MANAGED_BY, "kube-verdict-control-plane")
                .endMetadata()
                .addToData(BUNDLE_KEY, pem)
                .build();
        if (exists) {
            client.configMaps().inNamespace(namespace).resource(cm).update();
        } else {
            client.configMaps().inNamespace(namespace).resource(cm).create();
        }
    }
}
