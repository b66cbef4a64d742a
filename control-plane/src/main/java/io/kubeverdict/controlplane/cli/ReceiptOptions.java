// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubeverdict.controlplane.receipts.ReceiptWriting;
import io.kubeverdict.controlplane.receipts.WriterLease;
import io.kubeverdict.controlplane.replicas.PeerPods;
import io.kubeverdict.controlplane.replicas.PeerReplicas;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.runtime.grpc.TokenFileCredentials;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/** What the control plane writes from its receipts, and which other replicas it asks about their agents. */
final class ReceiptOptions {
    private static final Logger log = LoggerFactory.getLogger(ReceiptOptions.class);
    static final String PEERS_FROM_PODS = "pods";

    @Option(
            names = "--status-writes",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "With the Kubernetes API: write the Enforced condition on admin-tier policies and "
                    + "PolicyEnforced/PolicyNotEnforced Events on NetworkPolicies, by the replica that holds the Lease "
                    + "--writer-lease in --namespace (--no-status-writes: none). Default: on.")
    boolean statusWrites;

    @Option(
            names = "--readiness-gates",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "With the Kubernetes API: set the condition kube-verdict.io/policy-enforced on pods that "
                    + "list it as a readiness gate once their node applied their policies. Default: on.")
    boolean readinessGates;

    @Option(
            names = "--writer-lease",
            paramLabel = "NAME",
            defaultValue = WriterLease.DEFAULT_NAME,
            description = "The Lease (in --namespace) whose holder writes conditions and Events; identity "
                    + "$POD_NAME, else the host name. Default: ${DEFAULT-VALUE}.")
    String writerLease;

    @Option(
            names = "--peers",
            paramLabel = "pods|none|HOST:PORT,...",
            defaultValue = "${env:KUBE_VERDICT_PEERS:-}",
            description = "The other control-plane replicas, asked what their agents applied so that receipts, "
                    + "`wait` and conditions count every node whichever replica its agent streams from: pods (the "
                    + "Ready pods of --peer-selector in --namespace, at --listen's port; the default in a pod, with "
                    + "the Kubernetes API), none, or fixed addresses. They are dialled with auto TLS's CA and "
                    + "--peer-token-file, or in plaintext when this replica serves plaintext.")
    String peers;

    @Option(
            names = "--peer-selector",
            paramLabel = "KEY=VALUE[,...]",
            defaultValue = "app.kubernetes.io/name=kube-verdict-control-plane",
            description = "The labels of the control plane's pods (--peers pods). Default: ${DEFAULT-VALUE}.")
    String peerSelector;

    @Option(
            names = "--peer-token-file",
            paramLabel = "FILE",
            defaultValue = "/var/run/secrets/kube-verdict/token",
            description = "This replica's ServiceAccount token for the audience of --token-audience, sent to its "
                    + "peers (who review it and ask whether it may inspect). Default: ${DEFAULT-VALUE} when it exists.")
    Path peerTokenFile;

    /** This replica's name: the pod's name (the Downward API's POD_NAME), else the host name. */
    static String identity() {
        String pod = System.getenv("POD_NAME");
        if (pod != null && !pod.isBlank()) {
            return pod;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "control-plane-" + ProcessHandle.current().pid();
        }
    }

    boolean writes() {
        return statusWrites || readinessGates;
    }

    ReceiptWriting.Settings settings(String namespace) {
        return new ReceiptWriting.Settings(
                statusWrites,
                statusWrites,
                readinessGates,
                WriterLease.Settings.defaults(namespace, identity()).withName(writerLease),
                ControlPlane.RECEIPT_STALL_THRESHOLD);
    }

    /**
     * The peers to ask, or null for none (--peers none; or no Kubernetes API and no fixed list).
     *
     * @param serviceName the name peers' certificates carry (auto TLS), null when plaintext
     * @throws IllegalArgumentException naming the bad option
     */
    PeerReplicas peerReplicas(
            KubernetesClient client,
            String namespace,
            int port,
            ControlPlane cp,
            boolean plaintext,
            String serviceName) {
        String mode = peers.isBlank()
                ? (client != null && System.getenv("POD_NAME") != null ? PEERS_FROM_PODS : "none")
                : peers.strip();
        if (mode.equals("none")) {
            return null;
        }
        Path ca = cp.autoTlsCaBundle();
        if (!plaintext && ca == null) {
            throw new IllegalArgumentException("--peers needs --auto-tls or a plaintext --listen (peers' certificates "
                    + "are checked against auto TLS's CA); use --peers none");
        }
        PeerReplicas.Channels channels = target -> ClientChannels.open(
                target,
                plaintext ? null : new ClientChannels.Tls(null, null, ca, serviceName),
                Files.exists(peerTokenFile) ? new TokenFileCredentials(peerTokenFile) : null);
        if (mode.equals(PEERS_FROM_PODS)) {
            if (client == null) {
                throw new IllegalArgumentException("--peers pods needs the Kubernetes API");
            }
            return new PeerReplicas(identity(), new PeerPods(client, namespace, labels(peerSelector), port), channels);
        }
        List<PeerReplicas.Peer> fixed = new ArrayList<>();
        for (String target : mode.split(",", -1)) {
            try {
                fixed.add(new PeerReplicas.Peer(
                        "", HostPort.parseTarget(target.strip()).toString()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--peers: " + e.getMessage(), e);
            }
        }
        List<PeerReplicas.Peer> list = List.copyOf(fixed);
        return new PeerReplicas(identity(), () -> list, channels);
    }

    private static Map<String, String> labels(String selector) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (String pair : selector.split(",", -1)) {
            int eq = pair.indexOf('=');
            if (eq <= 0 || eq == pair.length() - 1) {
                throw new IllegalArgumentException("--peer-selector: want KEY=VALUE[,...], not '" + selector + "'");
            }
            labels.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        return labels;
    }
}
