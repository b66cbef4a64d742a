// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.mockapi;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Starts, injects and stops the server of {@link MockKubernetes}: the client first, then the server. */
public final class MockKubernetesExtension implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace STORE =
            ExtensionContext.Namespace.create(MockKubernetesExtension.class);

    /** One test's server and client. */
    private record Cluster(KubernetesMockServer server, KubernetesClient client) {}

    @Override
    public void beforeEach(ExtensionContext context) throws IllegalAccessException {
        Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
        KubernetesMockServer server = new KubernetesMockServer(
                new Context(Serialization.jsonMapper()),
                new MockWebServer(),
                expectations,
                new OffLoopWatchCloseDispatcher(expectations),
                false);
        server.init();
        Cluster cluster = new Cluster(server, server.createClient());
        context.getStore(STORE).put(Cluster.class, cluster);
        for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
            inject(instance, cluster);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Cluster cluster = context.getStore(STORE).remove(Cluster.class, Cluster.class);
        if (cluster == null) {
            return;
        }
        // Watches end from the client's side while the server still answers; then the server stops.
        try {
            cluster.client().close();
        } finally {
            cluster.server().destroy();
        }
    }

    private static void inject(Object instance, Cluster cluster) throws IllegalAccessException {
        for (Class<?> type = instance.getClass(); type != Object.class; type = type.getSuperclass()) {
            for (Field field : type.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || Modifier.isFinal(field.getModifiers())) {
                    continue;
                }
                Object value = field.getType() == KubernetesMockServer.class
                        ? cluster.server()
                        : field.getType() == KubernetesClient.class ? cluster.client() : null;
                if (value != null) {
                    field.setAccessible(true);
                    field.set(instance, value);
                }
            }
        }
    }
}
