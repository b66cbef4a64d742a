// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The control plane's start at scale (issue 34, "start with 150k pods: ready in < 15 s"): the real
 * control plane started against fabric8's mock API server (a real HTTP server on loopback) that
 * holds a {@link SyntheticCluster}, timed from {@code ControlPlane.start} to
 * {@code firstCalculation()} (informers listing every kind, the first full calculation, every
 * node's snapshot published). The CRUD server stores a create by scanning what it holds, so
 * 165k creates never finish; here its lists of the cluster's kinds are answered from JSON
 * serialised once ({@link PreloadedLists}), and everything else (watches, other kinds) by the
 * CRUD server, empty. The first round is the one that counts (a fresh JIT, as a new pod's). The
 * server answers from the same two cores, so the figure is an upper bound of a start against a
 * real API server on another machine.
 *
 * <p>Run (after {@code ./mvnw -B -q -o -pl control-plane -am -Pjmh -DskipTests test-compile}):
 * {@code java -Xmx8g -cp <control-plane jmh classpath> io.kubeverdict.controlplane.calc.StartAtScale};
 * size from -Dnodes, -Dnamespaces, -Dpods, -Dpolicies, -Dadmin (default 5000, 10000, 150000,
 * 10000, 0), -Drounds (default 2).
 */
public final class StartAtScale {
    /** Held: java.util.logging keeps loggers weakly, and a collected one forgets its level. */
    private static final Logger MOCK_LOG = Logger.getLogger("io.fabric8.mockwebserver");

    private StartAtScale() {}

    /** Answers a list of a preloaded kind (any query) with its JSON; the rest as the CRUD server does. */
    static final class PreloadedLists extends KubernetesCrudDispatcher {
        private final Map<String, byte[]> lists;

        PreloadedLists(Map<String, byte[]> lists) {
            this.lists = lists;
        }

        @Override
        public MockResponse handleGet(String path) {
            int query = path.indexOf('?');
            byte[] list = lists.get(query < 0 ? path : path.substring(0, query));
            return list == null
                    ? super.handleGet(path)
                    : new MockResponse().setResponseCode(200).setBody(list);
        }
    }

    public static void main(String[] args) throws Exception {
        SyntheticCluster c = SyntheticCluster.fromSystemProperties();
        MOCK_LOG.setLevel(Level.WARNING); // a line per request
        long serialising = System.nanoTime();
        Map<String, byte[]> lists = new HashMap<>();
        for (List<? extends HasMetadata> kind :
                List.of(c.nodeObjects, c.namespaces, c.pods, c.policies, c.adminPolicies)) {
            lists.putAll(listsByPath(kind));
        }
        System.out.printf(
                "%d pods, %d namespaces, %d policies, %d admin policies, %d node objects: %d lists, %.0f MB of JSON"
                        + " in %.1f s%n",
                c.pods.size(),
                c.namespaces.size(),
                c.policies.size(),
                c.adminPolicies.size(),
                c.nodeObjects.size(),
                lists.size(),
                lists.values().stream().mapToLong(b -> b.length).sum() / 1e6,
                (System.nanoTime() - serialising) / 1e9);
        c = null; // the control plane holds only what it read
        KubernetesMockServer server = new KubernetesMockServer(
                new Context(Serialization.jsonMapper()),
                new MockWebServer(),
                new HashMap<>(),
                new PreloadedLists(lists),
                false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
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

    /** The list JSON of each collection path these objects live under (one for cluster-scoped kinds). */
    private static Map<String, byte[]> listsByPath(List<? extends HasMetadata> objects) {
        Map<String, List<HasMetadata>> byPath = new LinkedHashMap<>();
        for (HasMetadata o : objects) {
            byPath.computeIfAbsent(collectionPath(o), p -> new ArrayList<>()).add(o);
        }
        Map<String, byte[]> lists = new HashMap<>();
        byPath.forEach((path, items) -> {
            StringBuilder json = new StringBuilder("{\"apiVersion\":\"")
                    .append(items.get(0).getApiVersion())
                    .append("\",\"kind\":\"")
                    .append(items.get(0).getKind())
                    .append("List\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[");
            for (int i = 0; i < items.size(); i++) {
                HasMetadata item = items.get(i);
                if (item.getMetadata().getResourceVersion() == null) {
                    item.getMetadata().setResourceVersion("1");
                }
                json.append(i == 0 ? "" : ",").append(Serialization.asJson(item));
            }
            lists.put(path, json.append("]}").toString().getBytes(StandardCharsets.UTF_8));
        });
        return lists;
    }

    /** Where a list of every object of this one's kind, in all namespaces, is asked for. */
    private static String collectionPath(HasMetadata o) {
        String apiVersion = o.getApiVersion();
        String group = apiVersion.contains("/") ? "/apis/" + apiVersion : "/api/" + apiVersion;
        return group + "/" + o.getPlural();
    }

    private static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).substring(0, 14);
        } catch (IOException e) {
            return "?";
        }
    }
}
