// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.events;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * One Kubernetes Event about a policy, as the control plane posts them: events about
 * cluster-scoped objects (the admin-tier kinds) live in namespace "default", as kubectl describe
 * expects.
 *
 * @param namespace the policy's namespace, null for a cluster-scoped kind
 * @param type Normal or Warning
 */
public record PolicyEvent(
        String apiVersion, String kind, String namespace, String name, String type, String reason, String message) {
    public static final String COMPONENT = "kube-verdict-control-plane";
    static final String CLUSTER_SCOPED_EVENTS = "default";

    /** Creates the Event; throws what the client throws (the caller decides whether to retry). */
    public void post(KubernetesClient client) {
        String now = DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
        String eventNamespace = namespace == null ? CLUSTER_SCOPED_EVENTS : namespace;
        Event e = new EventBuilder()
                .withNewMetadata()
                .withNamespace(eventNamespace)
                .withGenerateName(name + ".")
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion(apiVersion)
                .withKind(kind)
                .withNamespace(namespace)
                .withName(name)
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(message)
                .withNewSource()
                .withComponent(COMPONENT)
                .endSource()
                .withReportingComponent(COMPONENT)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .build();
        client.v1().events().inNamespace(eventNamespace).resource(e).create();
    }
}
