// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.BindableService;
import io.kubeverdict.controlplane.auth.CallLimits;
import io.kubeverdict.controlplane.auth.CallerKey;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.autotls.AutoTls;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.console.ConsoleBackend;
import io.kubeverdict.controlplane.events.PolicyProblemEvents;
import io.kubeverdict.controlplane.flows.FlowRecorder;
import io.kubeverdict.controlplane.inspect.InspectionService;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.observe.VerdictRelay;
import io.kubeverdict.controlplane.receipts.PeerReceipts;
import io.kubeverdict.controlplane.receipts.PolicyReceipts;
import io.kubeverdict.controlplane.receipts.ReceiptWriting;
import io.kubeverdict.controlplane.receipts.ReceiptingCalculator;
import io.kubeverdict.controlplane.receipts.ReplicatedReceipts;
import io.kubeverdict.controlplane.source.AdminPolicyApis;
import io.kubeverdict.controlplane.source.DirectoryReader;
import io.kubeverdict.controlplane.source.KubernetesSource;
import io.kubeverdict.controlplane.source.ManifestDirectorySource;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerLimits;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import io.kubeverdict.runtime.metrics.ProcessMetrics;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
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
 *
 * <p>Health and /readyz follow {@link Readiness}: SERVING once the first full calculation is
 * published and while the source loads. A manifest directory that stops loading turns readiness
 * off (open streams keep their last good state; new agents go to a replica that follows the
 * directory) until it loads again. If a thread the service cannot run without dies,
 * {@link #failed()} completes and the process should exit, so that Kubernetes restarts it.
 */
public final class ControlPlane implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ControlPlane.class);

    /** Where the cluster comes from. */
    public sealed interface Source {
        /**
         * @param apiDiscovery how often missing admin-tier policy APIs (CRDs) are looked for
         * @param apiAbsenceGrace how long discovery must say a watched admin-tier kind is not
         *     served before its policies are removed
         */
        record Kubernetes(KubernetesClient client, Duration resync, Duration apiDiscovery, Duration apiAbsenceGrace)
                implements Source {
            public Kubernetes(KubernetesClient client, Duration resync) {
                this(client, resync, KubernetesSource.DEFAULT_API_DISCOVERY);
            }

            public Kubernetes(KubernetesClient client, Duration resync, Duration apiDiscovery) {
                this(client, resync, apiDiscovery, AdminPolicyApis.DEFAULT_ABSENCE_GRACE);
            }
        }

        record Manifests(Path directory, DirectoryReader loader, ManifestDirectorySource.Timing timing)
                implements Source {
            public Manifests(Path directory, DirectoryReader loader) {
                this(directory, loader, ManifestDirectorySource.Timing.DEFAULT);
            }
        }
    }

    /** How agents (and inspecting users) prove who they are. */
    public sealed interface Auth {
        /** Nobody: plaintext on purpose, tests. */
        record None() implements Auth {}

        /** mTLS: the client certificate names the node (needs a client CA in {@link Config#tls}). */
        record Certificates() implements Auth {}

        /**
         * Projected ServiceAccount tokens, reviewed by the API server (needs the Kubernetes source):
         * agents are {@code system:serviceaccount:agentNamespace:agentServiceAccount} with tokens for
         * {@code audience}, bound to their node.
         */
        record Tokens(String audience, String agentNamespace, String agentServiceAccount) implements Auth {
            public static final String DEFAULT_AUDIENCE = "kube-verdict";
        }
    }

    /** metricsBind null: none; tls null: plaintext; autoTls null: tls or none, else our own (needs the API). */
    public record Config(
            InetSocketAddress listen,
            InetSocketAddress metricsBind,
            ServerTls tls,
            PolicySyncService.Options syncOptions,
            Auth auth,
            ServerLimits serverLimits,
            CallLimits.Config callLimits,
            AutoTls.Settings autoTls) {
        /** The default limits. */
        public Config(
                InetSocketAddress listen,
                InetSocketAddress metricsBind,
                ServerTls tls,
                PolicySyncService.Options syncOptions,
                Auth auth) {
            this(
                    listen,
                    metricsBind,
                    tls,
                    syncOptions,
                    auth,
                    ServerLimits.defaults(),
                    CallLimits.Config.defaults(),
                    null);
        }

        public Config withAutoTls(AutoTls.Settings settings) {
            return new Config(listen, metricsBind, null, syncOptions, auth, serverLimits, callLimits, settings);
        }

        /** Certificates when the TLS material has a client CA, else nobody. */
        public Config(
                InetSocketAddress listen,
                InetSocketAddress metricsBind,
                ServerTls tls,
                PolicySyncService.Options syncOptions) {
            this(
                    listen,
                    metricsBind,
                    tls,
                    syncOptions,
                    tls != null && tls.clientCa() != null ? new Auth.Certificates() : new Auth.None());
        }

        public Config {
            if (auth instanceof Auth.Certificates && (tls == null || tls.clientCa() == null)) {
                throw new IllegalArgumentException("certificate authentication needs TLS with a client CA");
            }
        }
    }

    private final Deque<AutoCloseable> closeables = new ArrayDeque<>();
    private final ProcessMetrics process = new ProcessMetrics("control-plane");
    private final SnapshotHub hub = new SnapshotHub();
    private final ControlPlaneMetrics metrics = new ControlPlaneMetrics(process.registry());
    private final CompletableFuture<Throwable> failed = new CompletableFuture<>();
    /** A policy not enforced on every node for longer than this counts in kubeverdict_policies_not_enforced. */
    public static final Duration RECEIPT_STALL_THRESHOLD = Duration.ofSeconds(60);

    private final PolicyReceipts receipts = new PolicyReceipts(metrics::policyEnforcedEverywhere);
    private Readiness readiness;
    private KubernetesSource kubernetes;
    private GrpcServer grpc;
    private MetricsEndpoint metricsServer;
    private ConsoleBackend console;
    private CalculationLoop loop;
    private PolicySyncService sync;
    private PolicyProblemEvents problemEvents;
    private InspectionService inspection;
    private ReplicatedReceipts replicated;
    private AutoTls autoTls;
    private VerdictRelay relay;

    private ControlPlane() {}

    public static ControlPlane start(Config config, PolicyCalculator calculator, Source source) throws Exception {
        ControlPlane cp = new ControlPlane();
        try {
            cp.startInternal(config, calculator, source);
            return cp;
        } catch (Throwable e) {
            cp.close(); // no half-started server may keep the process alive
            throw e;
        }
    }

    private void startInternal(Config config, PolicyCalculator calculator, Source source) throws Exception {
        // The manifest source logs every problem with its file and document once per change of
        // the list, the Kubernetes source's events log new ones: nothing to add here.
        Consumer<List<PolicyProblem>> problems = list -> {};
        if (source instanceof Source.Kubernetes k) {
            problemEvents = new PolicyProblemEvents(k.client());
            closeables.push(problemEvents);
            problems = problemEvents;
        }
        // The loop needs the calculator and the receipting calculator the loop's clock: tied after.
        CalculationLoop[] self = new CalculationLoop[1];
        loop = new CalculationLoop(
                new ReceiptingCalculator(calculator, receipts, () -> self[0].changeSeenUnixNanos()),
                hub,
                metrics,
                1,
                problems);
        self[0] = loop;
        loop.keepReceipts(receipts);
        metrics.policiesNotEnforced(
                () -> receipts.notEnforcedFor(RECEIPT_STALL_THRESHOLD.toNanos(), CalculationLoop.unixNanos()));
        loop.onDeath(e -> die("the calculation thread", e));
        closeables.push(loop);
        readiness = new Readiness();
        // Told by the hub as it becomes ready, before anyone can see the first calculation done.
        hub.onReady(readiness::firstCalculationPublished);
        // A manifest directory's first load (its settle interval, then parsing: most of a start)
        // runs beside the servers' start; the loop only queues what it delivers until loop.start().
        Thread firstLoad = source instanceof Source.Manifests m ? startManifests(m) : null;
        try {
            startServers(config, source);
        } finally {
            if (firstLoad != null) {
                firstLoad.join(); // its start() never throws; nothing is closed under it
            }
        }
        loop.start();
        if (kubernetes != null) {
            kubernetes.start();
            kubernetes
                    .informers()
                    .forEach((kind, informer) -> metrics.informer(kind, informer::isWatching, informer::hasSynced));
        }
    }

    /** Loads the directory once, then follows it, on a thread of its own; returns the first load's thread. */
    private Thread startManifests(Source.Manifests m) {
        metrics.registerManifestLoads();
        ManifestDirectorySource ms = new ManifestDirectorySource(
                m.directory(),
                new MeteredDirectoryReader(m.loader(), metrics),
                loop,
                m.timing(),
                new ManifestHealth(metrics, readiness, e -> die("the manifest watcher", e)));
        closeables.push(ms);
        Thread first = new Thread(ms::start, "manifest-first-load");
        first.setDaemon(true);
        first.start();
        return first;
    }

    private void startServers(Config config, Source source) throws Exception {
        AtomicInteger n = new AtomicInteger();
        ExecutorService sessions =
                Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
                    Thread t = new Thread(r, "sync-sender-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        closeables.push(sessions::shutdownNow);
        if (source instanceof Source.Kubernetes k) {
            kubernetes = new KubernetesSource(
                    k.client(),
                    loop,
                    k.resync().toMillis(),
                    k.apiDiscovery(),
                    k.apiAbsenceGrace(),
                    new AdminPolicyApis.Listener() {
                        @Override
                        public void served(AdminPolicyKind kind, boolean served) {
                            metrics.policyApiServed(kind, served);
                        }

                        @Override
                        public void unknown(AdminPolicyKind kind, boolean unknown) {
                            metrics.policyApiUnknown(kind, unknown);
                        }
                    });
            closeables.push(kubernetes);
        }
        CallerAuthentication callers = CallerAuthentication.of(
                config.auth(),
                config.tls() != null,
                config.listen(),
                source instanceof Source.Kubernetes k ? k.client() : null,
                kubernetes,
                process.registry());
        NodeAuthorizer authorizer = callers.authorizer();
        sync = new PolicySyncService(hub, metrics, authorizer, sessions, config.syncOptions());
        closeables.push(sync);
        sync.reportAppliedVersionsTo(receipts);
        inspection = new InspectionService(hub, sync, authorizer, loop::describeSets);
        relay = new VerdictRelay(hub, authorizer, metrics);
        sync.acceptVerdictUploads(relay::upload);
        inspection.serveVerdictsFrom(relay::observe);
        replicated = new ReplicatedReceipts(receipts, sync::connectedNodes);
        inspection.serveReceiptsFrom(replicated);
        inspection.reportSourceProblemsFrom(readiness::sourceProblem);

        ServerTls tls = config.tls();
        if (config.autoTls() != null) {
            if (!(source instanceof Source.Kubernetes k)) {
                throw new IllegalArgumentException(
                        "auto TLS keeps its certificate in a Secret: it needs the Kubernetes API");
            }
            AutoTls auto = AutoTls.start(k.client(), config.autoTls(), Clock.systemUTC());
            autoTls = auto;
            closeables.push(auto);
            tls = auto.serverTls();
        }
        CallLimits limits = new CallLimits(
                config.callLimits(),
                CallerKey::of,
                method -> ControlPlaneInspectionGrpc.SERVICE_NAME.equals(method.getServiceName()),
                process.registry(),
                System::nanoTime);
        console = ConsoleBackend.of(inspection, limits, callers.interceptors());
        grpc = GrpcEndpoint.create(
                        config.listen(),
                        tls,
                        config.serverLimits(),
                        limits,
                        callers.interceptors(),
                        List.<BindableService>of(sync, inspection))
                .start();
        closeables.push(grpc);
        log.info("gRPC listening on {}", grpc.listenSockets());
        if (config.metricsBind() != null) {
            // /readyz lets a kubelet httpGet probe work when the gRPC port requires client certificates.
            metricsServer = MetricsEndpoint.start(
                    config.metricsBind(),
                    process.registry(),
                    List.of(
                            new MetricsEndpoint.Probe("/healthz", () -> true, "not serving"),
                            new MetricsEndpoint.Probe("/readyz", readiness::ready, "not ready")));
            closeables.push(metricsServer);
            log.info("metrics on http://{}:{}/metrics", config.metricsBind().getHostString(), metricsServer.port());
        }
        readiness.tell(grpc::setServing);
    }

    private void die(String what, Throwable cause) {
        log.error(
                "{} died ({}); this control plane can no longer follow its source and must be restarted",
                what,
                cause.toString());
        if (readiness != null) {
            readiness.fatal(what + " died: " + cause);
        }
        failed.complete(cause);
    }

    /**
     * Writes what the receipts say to the API (see {@link ReceiptWriting}); with a Lease, problem
     * Events too are posted only by its holder. Needs the Kubernetes source.
     */
    public synchronized ReceiptWriting writeReceipts(KubernetesClient client, ReceiptWriting.Settings settings) {
        ReceiptWriting w =
                ReceiptWriting.start(client, settings, replicated, hub, sync, kubernetes, CalculationLoop::unixNanos);
        closeables.push(w);
        if (problemEvents != null && settings.lease() != null) {
            problemEvents.postOnlyWhile(w::writer);
        }
        return w;
    }

    /** Receipts answer for nodes reporting to these peers too; {@code self}: this replica's name. */
    public void askPeers(String self, PeerReceipts peers) {
        replicated.askPeers(self, peers);
    }

    /** Keeps a history of the verdicts agents relay (who asks for every verdict from then on), served by ListFlows. */
    public synchronized FlowRecorder keepFlowHistory(FlowRecorder.Settings settings) {
        FlowRecorder recorder = new FlowRecorder(
                settings, relay::placed, inspection::decideOn, process.registry(), System::currentTimeMillis);
        closeables.push(recorder); // closed (its file written) before the servers stop
        relay.recordInto(recorder::record);
        inspection.serveFlowsFrom(recorder.history());
        return recorder;
    }

    /** Serves the console ({@link ConsoleBackend}) on {@code bind} until closed. */
    public synchronized void serveConsole(InetSocketAddress bind) throws IOException {
        closeables.push(console.start(bind));
    }

    /** With auto TLS, the CA bundle file it keeps (every replica's certificate is signed by it); else null. */
    public Path autoTlsCaBundle() {
        return autoTls == null ? null : autoTls.caBundle();
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

    /** Completes (with the cause) when a thread the service cannot run without has died: exit then. */
    public CompletableFuture<Throwable> failed() {
        return failed;
    }

    /** Whether this replica is ready for new agents, and why not ("" when it is). */
    public boolean ready() {
        return readiness != null && readiness.ready();
    }

    public String notReadyReason() {
        return readiness == null ? "starting" : readiness.reason();
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
