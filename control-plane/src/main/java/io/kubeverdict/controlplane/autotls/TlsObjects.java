// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The two objects auto TLS keeps in the control plane's namespace: the Secret with the CA and
 * serving material (replaced only at the resourceVersion read, so replicas that race cannot
 * overwrite each other: the loser gets a conflict and reads again) and the ConfigMap with the CA
 * bundle the agents mount.
 *
 * <p>The manifests ship both, empty (audit L8): the control plane then needs only {@code get} and
 * {@code update} on those two names, no {@code create} in its namespace (which would let it make
 * any Secret there, legacy ServiceAccount token Secrets included). An update keeps what the
 * installer put on the object (labels, annotations such as kubectl's last-applied configuration,
 * the type), so re-applying the manifests leaves the material alone. Only an object that is
 * missing is created, for installs that grant that themselves.
 */
final class TlsObjects {
    static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    static final String BUNDLE_KEY = "ca.crt";
    private static final int FORBIDDEN = 403;

    /** A Secret's decoded data, and the object as read (its version, and what else the installer put on it). */
    record Stored(Map<String, String> data, Secret object) {
        String resourceVersion() {
            return object.getMetadata().getResourceVersion();
        }

        /** The shipped, empty Secret (or one emptied): nothing to use, nothing to report as broken. */
        boolean empty() {
            return data.values().stream().allMatch(String::isBlank);
        }
    }

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
        return new Stored(data, s);
    }

    private static String decode(String base64) {
        try {
            return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return ""; // not base64: the material check reports the key as unusable
        }
    }

    /**
     * Replaces the data of the Secret read as {@code stored} at its resourceVersion (a conflict is
     * a KubernetesClientException 409), or creates it when it was missing.
     */
    void writeSecret(Map<String, String> data, Stored stored) {
        Map<String, String> encoded = new LinkedHashMap<>();
        data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
        if (stored != null) {
            Secret secret = new SecretBuilder(stored.object())
                    .withData(encoded)
                    .withStringData(null)
                    .build();
            client.secrets().inNamespace(namespace).resource(secret).update();
            return;
        }
        Secret secret = new SecretBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(secretName)
                .addToLabels(MANAGED_BY, "kube-verdict-control-plane")
                .endMetadata()
                .withType("Opaque")
                .withData(encoded)
                .build();
        create(
                secretPlace(),
                () -> client.secrets().inNamespace(namespace).resource(secret).create());
    }

    /** The ConfigMap as read; null when it does not exist. */
    ConfigMap readConfigMap() {
        return client.configMaps()
                .inNamespace(namespace)
                .withName(configMapName)
                .get();
    }

    /** The bundle a ConfigMap read holds; null when there is none. */
    static String bundleOf(ConfigMap cm) {
        return cm == null || cm.getData() == null ? null : cm.getData().get(BUNDLE_KEY);
    }

    /**
     * Puts the bundle into the ConfigMap read as {@code read} (not at its version: it is derived
     * from the Secret, so the last writer wins and all write the same), or creates it when missing.
     */
    void writeBundle(String pem, ConfigMap read) {
        if (read != null) {
            ConfigMap cm = new ConfigMapBuilder(read)
                    .editMetadata()
                    .withResourceVersion(null)
                    .endMetadata()
                    .addToData(BUNDLE_KEY, pem)
                    .build();
            client.configMaps().inNamespace(namespace).resource(cm).update();
            return;
        }
        ConfigMap cm = new ConfigMapBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(configMapName)
                .addToLabels(MANAGED_BY, "kube-verdict-control-plane")
                .endMetadata()
                .addToData(BUNDLE_KEY, pem)
                .build();
        create(
                configMapPlace(),
                () -> client.configMaps().inNamespace(namespace).resource(cm).create());
    }

    /** A create the install did not grant gets a message that says what is missing. */
    private static void create(String place, Runnable create) {
        try {
            create.run();
        } catch (KubernetesClientException e) {
            if (e.getCode() == FORBIDDEN) {
                throw new KubernetesClientException(
                        place + " does not exist and may not be created: the manifests ship it empty for the "
                                + "control plane to fill (apply them again: kubectl apply -k deploy/, or the Helm chart)",
                        e);
            }
            throw e;
        }
    }
}
