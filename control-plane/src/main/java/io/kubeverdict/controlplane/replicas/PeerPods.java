// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.replicas;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's replicas as the API lists them: the Ready pods with the Deployment's labels in
 * its namespace, at podIP:port. Listed at most every {@link #RELIST}; a failed list keeps the last
 * one (an API away must not make every other replica's nodes unknown at once).
 */
public final class PeerPods implements Supplier<List<PeerReplicas.Peer>> {
    private static final Logger log = LoggerFactory.getLogger(PeerPods.class);
    static final Duration RELIST = Duration.ofSeconds(10);

    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, String> labels;
    private final int port;

    // Guarded by this.
    private List<PeerReplicas.Peer> last = List.of();
    private long listedAtNanos;
    private boolean listed;

    public PeerPods(KubernetesClient client, String namespace, Map<String, String> labels, int port) {
        this.client = client;
        this.namespace = namespace;
        this.labels = Map.copyOf(labels);
        this.port = port;
    }

    @Override
    public synchronized List<PeerReplicas.Peer> get() {
        if (listed && System.nanoTime() - listedAtNanos < RELIST.toNanos()) {
            return last;
        }
        listedAtNanos = System.nanoTime();
        try {
            List<PeerReplicas.Peer> peers = new ArrayList<>();
            for (Pod pod : client.pods()
                    .inNamespace(namespace)
                    .withLabels(labels)
                    .list()
                    .getItems()) {
                String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
                if (ip != null && !ip.isEmpty() && pod.getMetadata().getDeletionTimestamp() == null && ready(pod)) {
                    String host = ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip;
                    peers.add(new PeerReplicas.Peer(pod.getMetadata().getName(), host + ":" + port));
                }
            }
            last = List.copyOf(peers);
            listed = true;
        } catch (KubernetesClientException e) {
            log.warn(
                    "listing the control plane's pods in {} failed ({}); asking the peers listed before",
                    namespace,
                    e.toString());
        }
        return last;
    }

    private static boolean ready(Pod pod) {
        if (pod.getStatus().getConditions() == null) {
            return false;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }
}
