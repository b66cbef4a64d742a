// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubeverdict.controlplane.auth.CallLimits;
import io.kubeverdict.controlplane.autotls.AutoTls;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.flows.OtlpFlowExport;
import io.kubeverdict.controlplane.replicas.PeerReplicas;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.runtime.cli.DurationText;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.runtime.cli.InsecureOption;
import io.kubeverdict.runtime.cli.LoggingOptions;
import io.kubeverdict.runtime.cli.MetricsOptions;
import io.kubeverdict.runtime.cli.ServerTlsOptions;
import io.kubeverdict.runtime.grpc.ServerLimits;
import io.kubeverdict.runtime.grpc.ServerTls;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "control-plane",
        mixinStandardHelpOptions = true,
        description = {
            "Watch the cluster (or a manifest directory) and stream per-node policy snapshots to agents.",
            "Without --kubeconfig or --manifests: the in-cluster service account (or ~/.kube/config)."
        })
final class ServeCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    static final class SourceOptions {
        @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Kubeconfig file of the cluster to watch.")
        Path kubeconfig;

        @Option(
                names = "--manifests",
                paramLabel = "DIR",
                description = "Directory of YAML manifests to use as the cluster (watched for changes).")
        Path manifests;
    }

    @ArgGroup(exclusive = true)
    SourceOptions source = new SourceOptions();

    @Option(
            names = "--listen",
            defaultValue = "0.0.0.0:9443",
            paramLabel = "HOST:PORT",
            converter = HostPort.Listen.class,
            description = "gRPC address (PolicySync, inspection, health, reflection). Default: ${DEFAULT-VALUE}.")
    HostPort listen;

    @Option(
            names = "--console-listen",
            paramLabel = "HOST:PORT",
            converter = HostPort.Listen.class,
            description = "Serve the read-only web console here (off unless given; e.g. 127.0.0.1:9180, reached with "
                    + "kubectl port-forward). It answers a bearer token allowed to inspect (--auth token) or loopback.")
    HostPort consoleListen;

    /** /metrics, /healthz (the process serves) and /readyz (the first full calculation is published). */
    @Mixin
    MetricsOptions metrics = new MetricsOptions("0.0.0.0:9100");

    @Mixin
    ServerTlsOptions tlsOptions;

    @Mixin
    LoggingOptions logging = new LoggingOptions();

    @Mixin
    InsecureOption insecure;

    @Option(
            names = "--auth",
            defaultValue = "token",
            paramLabel = "token|mtls|none",
            description = {
                "How agents prove their node. token (default): the agent's projected ServiceAccount token, "
                        + "reviewed by the API server (TokenReview) and bound to the node its pod runs on; mtls: a client "
                        + "certificate naming the node (--tls-client-ca); none: anyone may sync any node (tests, sandbox)."
            })
    String auth;

    @Option(
            names = "--token-audience",
            defaultValue = ControlPlane.Auth.Tokens.DEFAULT_AUDIENCE,
            paramLabel = "AUDIENCE",
            description = "The audience agents' tokens must be for (--auth token). Default: ${DEFAULT-VALUE}.")
    String tokenAudience;

    @Option(
            names = "--agent-service-account",
            defaultValue = "kube-verdict/kube-verdict-agent",
            paramLabel = "NAMESPACE/NAME",
            description =
                    "The agents' ServiceAccount (--auth token); no other account may sync. Default: ${DEFAULT-VALUE}.")
    String agentServiceAccount;

    @Option(
            names = "--resync",
            defaultValue = "10m",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "Informer resync period (10m, 1h30m or ISO-8601 PT10M). Default: ${DEFAULT-VALUE}.")
    Duration resync;

    @Option(
            names = "--api-discovery-interval",
            defaultValue = "30s",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description =
                    "How often to look for the admin-tier policy APIs (AdminNetworkPolicy, BaselineAdminNetworkPolicy, "
                            + "ClusterNetworkPolicy CRDs) that are not installed yet, and check those that are. Default: ${DEFAULT-VALUE}.")
    Duration apiDiscovery;

    @Option(
            names = "--api-absence-grace",
            defaultValue = "5m",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "How long API discovery must say a watched admin-tier policy kind is not served (a 404 "
                    + "included) before its policies are removed; one failed or empty answer removes nothing. "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration apiAbsenceGrace;

    @Option(
            names = "--stall-timeout",
            defaultValue = "60s",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "Cut a Sync stream whose agent has not read for this long (it reconnects and resyncs). "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration stallTimeout;

    @Option(
            names = "--max-message-bytes",
            defaultValue = "1048576",
            paramLabel = "BYTES",
            description = "Largest IP-set message on a Sync stream (gRPC's limit is 4 MiB). Default: ${DEFAULT-VALUE}.")
    int maxMessageBytes;

    @Option(
            names = "--max-concurrent-snapshots",
            defaultValue = "16",
            paramLabel = "N",
            description = "Sync streams building and sending a full snapshot at once; agents beyond wait in line "
                    + "(a fleet reconnecting after a restart). Default: ${DEFAULT-VALUE}.")
    int maxConcurrentSnapshots;

    @Option(
            names = "--max-inbound-message-bytes",
            defaultValue = "1048576",
            paramLabel = "BYTES",
            description = "Largest message a client may send (an agent's verdict batch is ~100 KiB); larger ones are "
                    + "refused unread. Default: ${DEFAULT-VALUE}.")
    int maxInboundMessageBytes;

    @Option(
            names = "--max-streams-per-caller",
            defaultValue = "4",
            paramLabel = "N",
            description = "Open streams (Sync, ReportVerdicts, ObserveVerdicts) one caller may hold: a node's agent, "
                    + "a user, a certificate, or an address when it has no credentials. An agent needs 2. "
                    + "Default: ${DEFAULT-VALUE}.")
    int maxStreamsPerCaller;

    @Option(
            names = "--inspection-rate",
            defaultValue = "20",
            paramLabel = "PER_SECOND",
            description = "Inspection calls (ListNodes, GetSnapshot, Explain, DescribeEndpoint) per caller and second, "
                    + "with bursts of twice as many. Default: ${DEFAULT-VALUE}.")
    double inspectionRate;

    @Option(
            names = "--auto-tls",
            description = "Make and renew TLS itself: a CA and serving certificate in the Secret "
                    + "--auto-tls-secret of --namespace (created, or reused), the CA bundle published in the ConfigMap "
                    + "--auto-tls-ca-configmap for the agents. Needs the Kubernetes API; not with --tls-cert.")
    boolean autoTls;

    @Option(
            names = "--namespace",
            paramLabel = "NAMESPACE",
            defaultValue = "${env:POD_NAMESPACE:-kube-verdict}",
            description =
                    "The control plane's own namespace, where auto TLS keeps its objects. Default: $POD_NAMESPACE, "
                            + "else kube-verdict.")
    String namespace;

    @Option(
            names = "--auto-tls-service",
            paramLabel = "NAME",
            defaultValue = "kube-verdict-control-plane",
            description = "The Service agents dial: the certificate names NAME.NAMESPACE.svc and its other forms. "
                    + "Default: ${DEFAULT-VALUE}.")
    String autoTlsService;

    @Option(
            names = "--auto-tls-secret",
            paramLabel = "NAME",
            defaultValue = AutoTls.Settings.DEFAULT_SECRET,
            description = "The Secret auto TLS keeps its CA and serving certificate in (the install's Role names it: "
                    + "change both). Default: ${DEFAULT-VALUE}.")
    String autoTlsSecret;

    @Option(
            names = "--auto-tls-ca-configmap",
            paramLabel = "NAME",
            defaultValue = AutoTls.Settings.DEFAULT_CONFIG_MAP,
            description =
                    "The ConfigMap auto TLS publishes the CA bundle in, for the agents to mount (the install's Role "
                            + "names it: change both). Default: ${DEFAULT-VALUE}.")
    String autoTlsConfigMap;

    @Mixin
    ReceiptOptions receiptOptions = new ReceiptOptions();

    @Mixin
    FlowHistoryOptions flowHistory = new FlowHistoryOptions();

    @Mixin
    FlowExportOptions flowExport = new FlowExportOptions();

    @Spec
    CommandSpec spec;

    /** The --auth mode with what it needs; throws {@link IllegalArgumentException} naming what is missing. */
    ControlPlane.Auth authentication(ServerTls tls) {
        switch (auth) {
            case "none":
                if (tls != null && tls.clientCa() != null) {
                    throw new IllegalArgumentException("--tls-client-ca asks for client certificates: use --auth mtls");
                }
                return new ControlPlane.Auth.None();
            case "mtls":
                if (tls == null || tls.clientCa() == null) {
                    throw new IllegalArgumentException("--auth mtls needs --tls-cert, --tls-key and --tls-client-ca");
                }
                return new ControlPlane.Auth.Certificates();
            case "token": {
                if (tls != null && tls.clientCa() != null) {
                    throw new IllegalArgumentException("--tls-client-ca asks for client certificates: use --auth mtls");
                }
                String[] account = agentServiceAccount.split("/", -1);
                if (account.length != 2 || account[0].isEmpty() || account[1].isEmpty()) {
                    throw new IllegalArgumentException(
                            "--agent-service-account must be NAMESPACE/NAME, not " + agentServiceAccount);
                }
                if (tokenAudience.isBlank()) {
                    throw new IllegalArgumentException("--token-audience must not be empty");
                }
                return new ControlPlane.Auth.Tokens(tokenAudience, account[0], account[1]);
            }
            default:
                throw new IllegalArgumentException("--auth must be token, mtls or none, not " + auth);
        }
    }

    private List<String> autoTlsNames() {
        return AutoTls.Settings.serviceNames(autoTlsService, namespace);
    }

    @Override
    public Integer call() throws Exception {
        logging.apply();
        PrintWriter err = spec.commandLine().getErr();
        ServerTls tls;
        ControlPlane.Auth authentication;
        InetSocketAddress grpcAddress;
        InetSocketAddress metricsAddress;
        ServerLimits serverLimits;
        CallLimits.Config callLimits;
        java.util.Optional<io.kubeverdict.controlplane.flows.FlowRecorder.Settings> history;
        Optional<OtlpFlowExport.Settings> export;
        try {
            history = flowHistory.settings();
            export = flowExport.settings(history.isPresent());
            tls = tlsOptions.tls().orElse(null);
            if (autoTls && (tls != null || source.manifests != null)) {
                throw new IllegalArgumentException(
                        "--auto-tls makes its own certificate in the cluster: not with --tls-cert " + "or --manifests");
            }
            if (tls == null && !autoTls) {
                insecure.checkPlaintextListen("--listen", listen);
            }
            authentication = authentication(tls);
            // The console is plain HTTP: a token sent to it crosses the path in clear.
            insecure.checkPlaintextListen("--console-listen", consoleListen);
            if (consoleListen != null && authentication instanceof ControlPlane.Auth.Certificates) {
                throw new IllegalArgumentException(
                        "--console-listen: a browser has no client certificate; use --auth token (or none)");
            }
            if (authentication instanceof ControlPlane.Auth.None) {
                insecure.checkUnauthenticatedListen("--listen", listen, "--auth none");
            }
            if (autoTls && authentication instanceof ControlPlane.Auth.Certificates) {
                throw new IllegalArgumentException("--auto-tls has no client CA: use it with --auth token");
            }
            grpcAddress = listen.socketAddress();
            metricsAddress = metrics.socketAddress();
            serverLimits = ServerLimits.defaults().withMaxInboundMessageBytes(maxInboundMessageBytes);
            callLimits = new CallLimits.Config(
                    maxStreamsPerCaller,
                    inspectionRate,
                    (int) Math.max(1, Math.ceil(2 * inspectionRate)),
                    CallLimits.Config.defaults().maxTrackedCallers());
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            return 2;
        }
        if (maxConcurrentSnapshots < 1) {
            err.println("--max-concurrent-snapshots must be at least 1");
            return 2;
        }
        if (apiDiscovery.isNegative() || apiDiscovery.isZero()) {
            err.println("--api-discovery-interval must be positive");
            return 2;
        }
        if (apiAbsenceGrace.isNegative()) {
            err.println("--api-absence-grace must not be negative");
            return 2;
        }
        if (source.manifests != null && authentication instanceof ControlPlane.Auth.Tokens) {
            err.println(
                    "--auth token needs the Kubernetes API (TokenReview); with --manifests use --auth mtls or --auth none");
            return 2;
        }
        ControlPlane.Source src;
        KubernetesClient client = null;
        if (source.manifests != null) {
            // A directory that does not exist (yet) is reported and waited for: nothing is served until it loads.
            src = new ControlPlane.Source.Manifests(source.manifests, new EngineDirectoryReader());
        } else {
            Config cfg = source.kubeconfig == null
                    ? Config.autoConfigure(null)
                    : Config.fromKubeconfig(Files.readString(source.kubeconfig));
            client = ModelSerialization.client(cfg);
            log.info("watching the cluster at {}", cfg.getMasterUrl());
            src = new ControlPlane.Source.Kubernetes(client, resync, apiDiscovery, apiAbsenceGrace);
        }
        ControlPlane.Config config = new ControlPlane.Config(
                grpcAddress,
                metricsAddress,
                tls,
                new PolicySyncService.Options(
                        maxMessageBytes, stallTimeout, Duration.ofSeconds(1), maxConcurrentSnapshots),
                authentication,
                serverLimits,
                callLimits,
                null);
        if (autoTls) {
            config = config.withAutoTls(
                    AutoTls.Settings.defaults(namespace, autoTlsNames()).withObjects(autoTlsSecret, autoTlsConfigMap));
        }

        CountDownLatch stopped = new CountDownLatch(1);
        ControlPlane cp = ControlPlane.start(config, new IncrementalPolicyCalculator(), src);
        PeerReplicas peers;
        try {
            peers = receiptOptions.peerReplicas(
                    client,
                    namespace,
                    cp.grpcPort(),
                    cp,
                    tls == null && !autoTls,
                    autoTlsNames().get(0));
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            cp.close();
            return 2;
        }
        if (peers != null) {
            cp.askPeers(ReceiptOptions.identity(), peers);
        }
        if (client != null && receiptOptions.writes()) {
            cp.writeReceipts(client, receiptOptions.settings(namespace));
        }

        var recorder = history.map(cp::keepFlowHistory);
        try {
            recorder.ifPresent(r -> export.ifPresent(e -> r.exportTo(registry -> OtlpFlowExport.start(e, registry))));
        } catch (IllegalArgumentException e) {
            err.println("--flow-export-otlp: " + e.getMessage());
            cp.close();
            return 2;
        }
        if (consoleListen != null) {
            try {
                cp.serveConsole(consoleListen.socketAddress());
            } catch (IOException e) {
                err.println("--console-listen: " + e.getMessage());
                cp.close();
                return 2;
            }
        }
        KubernetesClient k8s = client;
        // SIGTERM/SIGINT: stop sources, end streams (agents keep their state and reconnect elsewhere).
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            log.info("shutting down");
                            cp.close();
                            if (peers != null) {
                                peers.close();
                            }
                            if (k8s != null) {
                                k8s.close();
                            }
                            stopped.countDown();
                        },
                        "shutdown"));
        // A thread the service cannot run without died: exit non-zero so that Kubernetes restarts us.
        cp.failed().thenRun(stopped::countDown);
        stopped.await();
        return cp.failed().isDone() ? 1 : 0;
    }
}
