package io.kubeverdict.controlplane.service;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.BindableService;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.events.PolicyProblemEvents;
import io.kubeverdict.controlplane.inspect.InspectionService;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.source.KubernetesSource;
import io.kubeverdict.controlplane.source.ManifestDirectorySource;
import io.kubeverdict.controlplane.source.ManifestLoader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.controlplane.tls.NodeAuthorizer;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import io.kubeverdict.runtime.metrics.ProcessMetrics;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running service, wired: a source -> the calculation loop -> the snapshot hub -> the gRPC
 * endpoint (PolicySync, inspection, health, reflection) and the metrics endpoint.
 */
public final class ControlPlane implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ControlPlane.class);

    /** Where the cluster comes from. */
    public sealed interface Source {
        /** @param apiDiscovery how often missing admin-tier policy APIs (CRDs) are looked for */
        record Kubernetes(KubernetesClient client, Duration resync, Duration apiDiscovery) implements Source {
            public Kubernetes(KubernetesClient client, Duration resync) {
                this(client, resync, KubernetesSource.DEFAULT_API_DISCOVERY);
            }
        }

        record Manifests(Path directory, ManifestLoader loader) implements Source {}
    }

    /** @param metricsBind null: no metrics endpoint; @param tls null: plaintext */
    public record Config(InetSocketAddress listen, InetSocketAddress metricsBind, ServerTls tls,
            PolicySyncService.Options syncOptions) {}

    private final Deque<AutoCloseable> closeables = new ArrayDeque<>();
    private final ProcessMetrics process = new ProcessMetrics("control-plane");
    private final SnapshotHub hub = new SnapshotHub();
    private final ControlPlaneMetrics metrics = new ControlPlaneMetrics(process.registry());
    private GrpcServer grpc;
    private MetricsEndpoint metricsServer;
    private CalculationLoop loop;

    private ControlPlane() {}

    public static ControlPlane start(Config config, PolicyCalculator calculator, Source source) throws Exception {
        ControlPlane cp = new ControlPlane();
        try {
            cp.startInternal(config, calculator, source);
            return cp;
        } catch (Exception e) {
            cp.close();
            throw e;
        }
    }

    private void startInternal(Config config, PolicyCalculator calculator, Source source) throws Exception {
        Consumer<List<PolicyProblem>> problems = list -> list.forEach(p -> log.warn("policy problem: {}", p));
        if (source instanceof Source.Kubernetes k) {
            PolicyProblemEvents events = new PolicyProblemEvents(k.client());
            closeables.push(events);
            problems = events;
        }
        loop = new CalculationLoop(calculator, hub, metrics, 1, problems);
        closeables.push(loop);

        AtomicInteger n = new AtomicInteger();
        ExecutorService sessions = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()),
                r -> {
                    Thread t = new Thread(r, "sync-sender-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        closeables.push(sessions::shutdownNow);
        NodeAuthorizer authorizer = config.tls() == null ? NodeAuthorizer.allowAll() : NodeAuthorizer.requireNodeCertificate();
        PolicySyncService sync = new PolicySyncService(hub, metrics, authorizer, sessions, config.syncOptions());
        closeables.push(sync);
        InspectionService inspection = new InspectionService(hub, sync);

        grpc = GrpcEndpoint.create(config.listen(), config.tls(), List.<BindableService>of(sync, inspection)).start();
        closeables.push(grpc);
        log.info("gRPC listening on {}", grpc.listenSockets());
        if (config.metricsBind() != null) {
            // /readyz lets a kubelet httpGet probe work when the gRPC port requires client certificates.
            metricsServer = MetricsEndpoint.start(config.metricsBind(), process.registry(), List.of(
                    new MetricsEndpoint.Probe("/healthz", () -> true, "not serving"),
                    new MetricsEndpoint.Probe("/readyz", hub::isReady, "first calculation not done")));
            closeables.push(metricsServer);
            log.info("metrics on http://{}:{}/metrics", config.metricsBind().getHostString(), metricsServer.port());
        }
        // grpc.health SERVING once the first full calculation is published.
        loop.firstCalculation().thenRun(() -> grpc.setServing(true));
        loop.start();

        if (source instanceof Source.Kubernetes k) {
            KubernetesSource ks = new KubernetesSource(k.client(), loop, k.resync().toMillis(), k.apiDiscovery(),
                    metrics::policyApiServed);
            closeables.push(ks);
            ks.start();
        } else if (source instanceof Source.Manifests m) {
            ManifestDirectorySource ms = new ManifestDirectorySource(m.directory(), m.loader(), loop,
                    Duration.ofMillis(200), Duration.ofSeconds(30));
            closeables.push(ms);
            ms.start();
        }
    }

    public int grpcPort() {
        return grpc.port();
    }

    public int metricsPort() {
        return metricsServer == null ? -1 : metricsServer.port();
    }

    public SnapshotHub hub() {
        return hub;
    }

    public ControlPlaneMetrics metrics() {
        return metrics;
    }

    public CompletableFuture<Void> firstCalculation() {
        return loop.firstCalculation();
    }

    /** Stops in reverse start order: sources first, the gRPC server (streams end), then the rest. */
    @Override
    public void close() {
        while (!closeables.isEmpty()) {
            AutoCloseable c = closeables.pop();
            try {
                c.close();
            } catch (Exception e) {
                log.warn("error while stopping {}", c, e);
            }
        }
        process.close();
    }
}
