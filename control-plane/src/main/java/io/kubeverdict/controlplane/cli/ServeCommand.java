package io.kubeverdict.controlplane.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineManifestLoader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.tls.TlsFiles;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "control-plane", mixinStandardHelpOptions = true,
        description = {"Watch the cluster (or a manifest directory) and stream per-node policy snapshots to agents.",
                "Without --kubeconfig or --manifests: the in-cluster service account (or ~/.kube/config)."})
final class ServeCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    static final class SourceOptions {
        @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Kubeconfig file of the cluster to watch.")
        Path kubeconfig;

        @Option(names = "--manifests", paramLabel = "DIR",
                description = "Directory of YAML manifests to use as the cluster (watched for changes).")
        Path manifests;
    }

    @ArgGroup(exclusive = true)
    SourceOptions source = new SourceOptions();

    @Option(names = "--listen", defaultValue = "0.0.0.0:9443", paramLabel = "HOST:PORT",
            description = "gRPC address (PolicySync, inspection, health, reflection). Default: ${DEFAULT-VALUE}.")
    String listen;

    @Option(names = "--metrics-bind-address", defaultValue = "0.0.0.0:9100", paramLabel = "HOST:PORT",
            description = "Prometheus /metrics address; empty to disable. Default: ${DEFAULT-VALUE}.")
    String metricsBind;

    @Option(names = "--tls-cert", paramLabel = "FILE", description = "Server certificate chain (PEM).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "Server private key (PEM, PKCS#8).")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "FILE",
            description = "CA (PEM) that signs agent certificates; a certificate may only sync the node it names "
                    + "(subject CN system:node:NAME, or a DNS SAN equal to NAME).")
    Path tlsClientCa;

    @Option(names = "--resync", defaultValue = "PT10M", paramLabel = "DURATION",
            description = "Informer resync period (ISO-8601). Default: ${DEFAULT-VALUE}.")
    Duration resync;

    @Option(names = "--stall-timeout", defaultValue = "PT60S", paramLabel = "DURATION",
            description = "Cut a Sync stream whose agent has not read for this long (it reconnects and resyncs). "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration stallTimeout;

    @Option(names = "--max-message-bytes", defaultValue = "1048576", paramLabel = "BYTES",
            description = "Largest IP-set message on a Sync stream (gRPC's limit is 4 MiB). Default: ${DEFAULT-VALUE}.")
    int maxMessageBytes;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        TlsFiles tls = null;
        int tlsGiven = (tlsCert == null ? 0 : 1) + (tlsKey == null ? 0 : 1) + (tlsClientCa == null ? 0 : 1);
        if (tlsGiven != 0 && tlsGiven != 3) {
            err.println("--tls-cert, --tls-key and --tls-client-ca go together");
            return 2;
        }
        if (tlsGiven == 3) {
            tls = new TlsFiles(tlsCert, tlsKey, tlsClientCa);
        }
        ControlPlane.Source src;
        KubernetesClient client = null;
        if (source.manifests != null) {
            // A directory that does not exist (yet) is reported and waited for: nothing is served until it loads.
            src = new ControlPlane.Source.Manifests(source.manifests, new EngineManifestLoader());
        } else {
            Config cfg = source.kubeconfig == null ? Config.autoConfigure(null)
                    : Config.fromKubeconfig(Files.readString(source.kubeconfig));
            client = new KubernetesClientBuilder().withConfig(cfg).build();
            log.info("watching the cluster at {}", cfg.getMasterUrl());
            src = new ControlPlane.Source.Kubernetes(client, resync);
        }
        ControlPlane.Config config = new ControlPlane.Config(address(listen),
                metricsBind.isBlank() ? null : address(metricsBind), tls,
                new PolicySyncService.Options(maxMessageBytes, stallTimeout, Duration.ofSeconds(1)));

        CountDownLatch stopped = new CountDownLatch(1);
        ControlPlane cp = ControlPlane.start(config, new IncrementalPolicyCalculator(), src);
        KubernetesClient k8s = client;
        // SIGTERM/SIGINT: stop sources, end streams (agents keep their state and reconnect elsewhere).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("shutting down");
            cp.close();
            if (k8s != null) {
                k8s.close();
            }
            stopped.countDown();
        }, "shutdown"));
        // A thread the service cannot run without died: exit non-zero so that Kubernetes restarts us.
        cp.failed().thenRun(stopped::countDown);
        stopped.await();
        return cp.failed().isDone() ? 1 : 0;
    }

    static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("want HOST:PORT, got " + hostPort);
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    }
}
