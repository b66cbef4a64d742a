// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The control plane's start at scale (issue 34, "start with 150k pods: ready in < 15 s"): a
 * {@link SyntheticCluster} stored in fabric8's mock API server (CRUD mode, a real HTTP server on
 * loopback), then the real control plane started against it as in a cluster (informers listing
 * every kind, the first full calculation, every node's snapshot published) and timed from
 * {@code ControlPlane.start} to {@code firstCalculation()}. The first start is the one that
 * counts (a fresh JIT, as a new pod's); later rounds show the same work warm. The mock server
 * answers the lists from the same two cores, so the figure is an upper bound of a start against a
 * real API server on another machine.
 *
 * <p>Run (after {@code ./mvnw -B -q -o -pl control-plane -am -Pjmh -DskipTests test-compile}):
 * {@code java -Xmx8g -cp <control-plane test classpath> io.kubeverdict.controlplane.calc.StartAtScale};
 * size from -Dnodes, -Dnamespaces, -Dpods, -Dpolicies, -Dadmin (default 5000, 10000, 150000,
 * 10000, 0), -Drounds (default 2).
 */
public final class StartAtScale {
    /** The mock server logs every request: 165k lines would cost more than the requests. */
    private static final java.util.logging.Logger MOCK_LOG =
            java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    private StartAtScale() {}

    public static void main(String[] args) throws Exception {
        SyntheticCluster c = new SyntheticCluster(
                Integer.getInteger("nodes", 5000),
                Integer.getInteger("namespaces", 10000),
                Integer.getInteger("pods", 150000),
                Integer.getInteger("policies", 10000),
                Integer.getInteger("admin", 0),
                42);
        MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
        KubernetesMockServer server = new KubernetesMockServer(
                new Context(Serialization.jsonMapper()),
                new MockWebServer(),
                new HashMap<>(),
                new KubernetesCrudDispatcher(),
                false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
            long stored = System.nanoTime();
            store(client, c);
            System.out.printf(
                    "stored %d pods, %d namespaces, %d policies, %d nodes in %.1f s%n",
                    c.pods.size(),
                    c.namespaces.size(),
                    c.policies.size(),
                    c.nodeObjects.size(),
                    (System.nanoTime() - stored) / 1e9);
            c = null; // the control plane holds only what it read
            for (int round = 1; round <= Integer.getInteger("rounds", 2); round++) {
                long start = System.nanoTime();
                try (ControlPlane cp = ControlPlane.start(
                        new ControlPlane.Config(
                                new InetSocketAddress("127.0.0.1", 0),
                                null,
                                null,
                                PolicySyncService.Options.defaults(),
                                new ControlPlane.Auth.None()),
                        new IncrementalPolicyCalculator(),
                        new ControlPlane.Source.Kubernetes(client, Duration.ZERO))) {
                    cp.firstCalculation().get(30, TimeUnit.MINUTES);
                    System.out.printf(
                            "round %d: start -> first full calculation published %.2f s (load %s)%n",
                            round, (System.nanoTime() - start) / 1e9, load());
                }
            }
        } finally {
            server.destroy();
        }
    }

    /** Every object created through the API, eight requests at a time. */
    private static void store(KubernetesClient client, SyntheticCluster c) throws Exception {
        List<HasMetadata> all = new ArrayList<>();
        all.addAll(c.nodeObjects);
        all.addAll(c.namespaces);
        all.addAll(c.pods);
        all.addAll(c.policies);
        all.addAll(c.adminPolicies);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> created = new ArrayList<>();
            for (HasMetadata o : all) {
                created.add(pool.submit(() -> client.resource(o).create()));
            }
            for (Future<?> f : created) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static String load() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .substring(0, 14);
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
