// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.grpc.ManagedChannel;
import io.kubeverdict.agent.conntrack.ConntrackRejudger;
import io.kubeverdict.agent.conntrack.ConntrackTable;
import io.kubeverdict.agent.conntrack.LocalAddresses;
import io.kubeverdict.agent.dns.DnsLearner;
import io.kubeverdict.agent.dns.DnsLoop;
import io.kubeverdict.agent.dns.DnsMetrics;
import io.kubeverdict.agent.dns.DnsResolvers;
import io.kubeverdict.agent.dns.DnsTable;
import io.kubeverdict.agent.dns.LearnedAddressBook;
import io.kubeverdict.agent.dns.WatchedAddresses;
import io.kubeverdict.agent.inspect.AgentIdentity;
import io.kubeverdict.agent.inspect.AgentInspectionService;
import io.kubeverdict.agent.inspect.CutVerdicts;
import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.AgentMetrics;
import io.kubeverdict.agent.metrics.BlindSpotMetrics;
import io.kubeverdict.agent.metrics.ConntrackMetrics;
import io.kubeverdict.agent.metrics.VerdictWatchMetrics;
import io.kubeverdict.agent.nft.BridgeBlindSpots;
import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.QueuedCounter;
import io.kubeverdict.agent.observe.VerdictUplink;
import io.kubeverdict.agent.state.GenerationListener;
import io.kubeverdict.agent.state.PodGuard;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.AppliedReporter;
import io.kubeverdict.agent.sync.Backoff;
import io.kubeverdict.agent.sync.ControlPlaneChannel;
import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.agent.sync.SyncClient;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.verdict.HoldLoop;
import io.kubeverdict.agent.verdict.HoldMetrics;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.agent.verdict.VerdictLoop;
import io.kubeverdict.jni.NativeLibrary;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node agent: sync client -> state (index + nftables sets) -> verdict loop, plus the
 * inspection and metrics servers. Runs in the network namespace of the process (the node's).
 *
 * <h2>Failure modes, exactly</h2>
 * <ul>
 *   <li><b>Before the first InSync</b> the agent enforces the state file's state (its last
 *       enforced state, see {@link StateFile}) when it is this node's, intact and not too old:
 *       table, sets and index as they were, in either mode. Without such a file it writes nothing
 *       to the kernel: if there is no table of ours, nothing is queued and all traffic passes; if
 *       a killed agent left one, it stays and its pods' new connections are answered with the
 *       default verdict (accept with {@code --fail-open}, drop without). At InSync the table is
 *       replaced atomically by the current one.</li>
 *   <li><b>Control plane away</b>: the last applied state stays enforced, unchanged; the agent
 *       reconnects with backoff and swaps in the fresh state at the next InSync.</li>
 *   <li><b>Agent killed</b> (SIGKILL, crash, OOM): the table stays and the kernel unbinds the queue.
 *       New connections to or from policy-selected local pods then meet a queue nobody listens on:
 *       with {@code --fail-open} the queue rule carries {@code bypass}, so they are accepted
 *       (unenforced); without it they are dropped (fail-closed) until an agent binds the queue
 *       again. Established connections and unselected pods are never affected. Packets that were
 *       waiting in the queue at the moment of the kill are dropped by the kernel in both modes.</li>
 *   <li><b>Queue full</b> (agent too slow): the kernel accepts the overflow with
 *       {@code --fail-open} (NFQA_CFG_F_FAIL_OPEN) and drops it without.</li>
 *   <li><b>Agent stopped</b> (SIGTERM, clean shutdown): it stops syncing, answers what is still
 *       queued and unbinds. With {@code --on-exit auto} (default) a fail-closed agent keeps its
 *       table, so a rolling update behaves like a kill (dropped until the next agent is in sync),
 *       and a fail-open agent deletes it (nothing enforced until it runs again). {@code keep} /
 *       {@code remove} choose explicitly; uninstalling a fail-closed agent wants {@code remove}.</li>
 *   <li><b>Malformed packets</b> and verdict-function failures get the default verdict (accept
 *       with {@code --fail-open}, drop without) and are counted.</li>
 *   <li><b>Established connections</b> are never touched while the agent is down, in either mode;
 *       after each InSync (start, resync) every selected endpoint's connections are judged by the
 *       new state and those it denies are cut ({@code --cut-action}), and after each later change
 *       those of the endpoints it affects.</li>
 * </ul>
 */
public final class Agent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    public static final String VERSION = BuildVersion.current();
    static final int BATCH = 64;
    private final AgentConfig config;
    private final VerdictQueues verdictQueues;
    private volatile GrpcServer inspection; // read by the sync thread's applied listener
    private MetricsEndpoint metricsHttp;
    private final SyncStatus status = new SyncStatus();
    private StateHolder state;
    private AgentMetrics metrics;
    /** The sync client's enforcer until the kernel side is set up. */
    private final PendingEnforcer pending = new PendingEnforcer();
    /** Everything started, in the order it stops. */
    private final AgentShutdown shutdown;
    /** What the start opened (the shutdown's list): closed in reverse order. */
    private final List<AutoCloseable> opened;

    private DnsTable dnsTable;
    private DnsLearner learner;
    /** Bytes of a DNS response copied to the agent: UDP answers up to EDNS 4096 fit, as do TCP segments of MTU 9000. */
    static final int DNS_COPY_BYTES = 9216;

    private static final int DNS_BATCH = 32;

    private Agent(AgentConfig config) {
        this.config = config;
        this.shutdown = new AgentShutdown(config.table(), config.removeTableOnExit(), pending);
        this.opened = shutdown.opened();
        this.verdictQueues = new VerdictQueues(config.queueId(), config.queues());
    }

    /** Starts everything; on failure, what was started is closed again. */
    public static Agent start(AgentConfig config) throws Exception {
        Agent agent = new Agent(config);
        try {
            agent.startAll();
            return agent;
        } catch (Exception | Error e) {
            agent.close();
            throw e;
        }
    }

    private void startAll() throws Exception {
        // Sync first: the channel's setup (TLS, HTTP/2), the stream and the first snapshot's assembly run on
        // gRPC's and the sync thread while this one sets up shim, queues and verdict threads (PendingEnforcer waits).
        ManagedChannel channel = ControlPlaneChannel.open(config.controlPlane(), config.tls(), config.tokenFile());
        opened.add(() -> {
            channel.shutdownNow(); // the reporter's heartbeats stop with it
            channel.awaitTermination(2, TimeUnit.SECONDS);
        });
        LearnedAddressBook book = new LearnedAddressBook();
        state = new StateHolder(config.failOpen() ? 1 : 0, book);
        AppliedReporter reporter = new AppliedReporter(
                channel, config.node(), VERSION, config.telemetry().heartbeat());
        Clock clock = Clock.systemUTC();
        KeptState kept = new KeptState(config, clock); // read by the sync thread's first request, or below
        SyncClient sync = new SyncClient(
                        channel,
                        SyncRequest.newBuilder()
                                .setNode(config.node())
                                .setAgentVersion(VERSION)
                                .setAgentStartTime(processStart())
                                .build(),
                        () -> new SnapshotAssembler(config.node()),
                        pending,
                        (sequence, eventTime) -> {
                            reporter.applied(sequence, eventTime);
                            metrics.applied(sequence, eventTime); // set before pending was ready
                            GrpcServer health = inspection; // null until started below (or never asked for)
                            if (health != null) {
                                health.setServing(true);
                            }
                        },
                        Backoff.DEFAULT,
                        Backoff.UNREACHABLE,
                        () -> ThreadLocalRandom.current().nextDouble(),
                        status)
                .resumingFrom(kept::resumable)
                .start();
        shutdown.sync(() -> {
            sync.close();
            return !sync.isRunning();
        });
        log.info("syncing from {}", config.controlPlane());
        NativeLibrary.ensureAvailable();
        Nftables nft = new Nftables();
        shutdown.nftables(nft);
        NftManager manager = NftManager.create(
                nft,
                config.table(),
                config.queueId(),
                config.queues(),
                config.failOpen(),
                config.queuePath(),
                null,
                config.cutAction(),
                config.verdictCache());
        shutdown.policyTable(manager::remove);
        log.info(
                "node {}: queues {}..{} of {} packets via {}, {}, established connections the policy denies: {}",
                config.node(),
                config.queueId(),
                verdictQueues.last(),
                config.queueLength(),
                kernelPath(manager.path()),
                config.failOpen() ? "fail-open" : "fail-closed",
                config.cutAction() == CutAction.NONE
                        ? "left open"
                        : config.cutAction().flag());

        // One queue and one verdict thread per queue: the kernel spreads new connections over them.
        List<NfQueue> queues = new ArrayList<>();
        for (int id = config.queueId(); id <= verdictQueues.last(); id++) {
            NfQueue queue = new NfQueue(
                    id,
                    NfQueue.FLAG_GSO | (config.failOpen() ? NfQueue.FLAG_FAIL_OPEN : 0),
                    NfQueue.COPY_BYTES,
                    config.queueLength());
            opened.add(queue);
            queues.add(queue);
        }
        Nftables scrapeNft = new Nftables(); // the scrapes' own context: libnftables contexts are not shared
        opened.add(scrapeNft); // closed after the metrics (reverse order)
        metrics = new AgentMetrics(
                status,
                state,
                verdictQueues.ids(),
                VerdictQueues::read,
                clock,
                config.telemetry().policyVerdictSeries());
        opened.add(metrics);
        metrics.queuedByTable(() -> QueuedCounter.read(scrapeNft, manager.config()));
        for (NfQueue queue : queues) {
            io.micrometer.core.instrument.Gauge.builder("kubeverdict_queue_length", queue::length)
                    .description("Packets that may wait on our queue (--queue-length); beyond it the kernel drops "
                            + "new connections' first packets, or lets them through uncounted when fail-open")
                    .tags("queue", Integer.toString(queue.number()))
                    .register(metrics.registry());
        }
        BridgeBlindSpots blindSpots = BridgeBlindSpots.detect(); // audit M10: reported, not refused (operations.md)
        if (blindSpots.none()) {
            log.info("blind spots: {}", blindSpots.describe());
        } else {
            log.warn("blind spots: {}", blindSpots.describe());
        }
        BlindSpotMetrics.register(metrics.registry(), BridgeBlindSpots::detect, blindSpots);
        KernelSets kernel = new KernelSets(manager, metrics.nftApply());
        VerdictFeed feed = new VerdictFeed(4096, state::generation);
        VerdictWatchMetrics.register(metrics.registry(), feed);
        for (NfQueue queue : queues) {
            // per thread: the feed's rings and the policy counters' cache are single-producer
            Judge judge = new ObservedJudge(
                    state,
                    feed.producer(),
                    metrics.policyVerdicts().forAnotherThread(),
                    metrics.stagedVerdicts().forAnotherThread());
            VerdictLoop loop = new VerdictLoop(queue, BATCH, judge, metrics.verdicts(), config.failOpen());
            opened.add(loop); // closed before the queues (reverse order)
            verdictQueues.add(loop);
        }
        // The pod address guard's hold queue: the verdict loops move the first packets of pod
        // addresses the state does not know yet there, to be judged once it does (or time out).
        NfQueue holdQueue = new NfQueue(
                config.guard().queueId(),
                NfQueue.FLAG_GSO | (config.failOpen() ? NfQueue.FLAG_FAIL_OPEN : 0),
                NfQueue.COPY_BYTES,
                HoldLoop.QUEUE_LENGTH);
        opened.add(holdQueue);
        opened.add(new HoldLoop(
                holdQueue,
                new ObservedJudge(
                        state,
                        feed.producer(),
                        metrics.policyVerdicts().forAnotherThread(),
                        metrics.stagedVerdicts().forAnotherThread()),
                TimeUnit.MILLISECONDS.toNanos(config.guard().holdMillis()),
                config.failOpen(),
                new HoldMetrics(metrics.registry())));
        for (VerdictLoop loop : verdictQueues.loops()) {
            loop.holdTo(config.guard().queueId(), config.failOpen());
        }
        opened.add(feed);
        GenerationListener established = GenerationListener.NONE;
        if (config.cutAction() != CutAction.NONE) {
            ConntrackRejudger rejudger = new ConntrackRejudger(
                    ConntrackTable::open,
                    LocalAddresses.INTERFACES,
                    verdictQueues::awaitAnswered,
                    new CutVerdicts(feed, config.cutAction()),
                    new ConntrackMetrics(metrics.registry()),
                    System::nanoTime);
            opened.add(rejudger); // closed before the feed it reports to
            // The first generation of a stream (the agent's start, a resync) judges every selected
            // endpoint's connections; later ones only those of the endpoints they affect.
            established = (before, now) -> rejudger.changed(before, now, !status.inSync(), state.learnedOf(now));
        }

        // DNS answers to pods with domain-name rules: their own queue (whole responses copied, no
        // GSO: segments), learned before they are accepted; the DNS table bypasses when unbound.
        DnsLearner learner = new DnsLearner(
                config.dns().minTtlSeconds(),
                config.dns().maxTtlSeconds(),
                DnsResolvers.of(config.dns().resolvers()));
        NfQueue dnsQueue = new NfQueue(config.dns().queueId(), NfQueue.FLAG_FAIL_OPEN, DNS_COPY_BYTES);
        opened.add(dnsQueue);
        DnsLoop dnsLoop = new DnsLoop(
                dnsQueue,
                DNS_BATCH,
                state::learned,
                learner,
                book,
                DnsMetrics.register(metrics.registry(), learner, book));
        opened.add(dnsLoop);
        dnsTable = new DnsTable(nft, config.table() + "_dns", config.dns().queueId(), manager);
        shutdown.dnsTable(dnsTable::remove);
        this.learner = learner;

        if (config.telemetry().verdictUploadPerSecond() > 0) {
            // kube-verdict observe: uploads verdicts only while the control plane asks for them.
            opened.add(new VerdictUplink(
                            channel,
                            config.node(),
                            feed,
                            config.telemetry().verdictUploadPerSecond(),
                            metrics.registry(),
                            clock)
                    .start()); // closed before the channel (reverse order)
        }
        // The verdict cache: each generation tags its cacheable accepts and empties the kernel's cache.
        var cache = VerdictCacheWiring.start(config, verdictQueues, manager, kernel, metrics, state, scrapeNft, opened);
        Enforcer enforcer =
                dnsAfter(new StateEnforcer(state, kernel, clock, established, this::podGuard, cache.generations()));
        Enforcer unkept = enforcer;
        enforcer = kept.keptAcrossRuns(enforcer, opened, metrics.registry()); // itself with --state-dir none
        if (this.state.current() == null && !config.guard().podCidrs().isEmpty()) {
            guardAlone(unkept);
        }
        pending.ready(enforcer);
        // The servers start while the first snapshot is fetched and written: nothing on the way to
        // enforcing waits for them. /healthz says "not enforcing yet" until the table is written.
        if (config.inspectListen() != null) {
            AgentIdentity identity = new AgentIdentity(
                    config.node(), VERSION, kernelPath(manager.path()), config.queueId(), config.failOpen());
            // Health: NOT_SERVING until an in-sync state is in the kernel, then SERVING also while the
            // control plane is away (the agent keeps enforcing).
            inspection = GrpcServer.builder(config.inspectListen())
                    .service(new AgentInspectionService(
                            identity, state, status, verdictQueues::readTotals, feed, cache.flows()::read))
                    .build()
                    .start();
            opened.add(inspection);
            if (status.everApplied()) { // applied before the server existed: the listener saw null
                inspection.setServing(true);
            }
            log.info("inspection gRPC on {}", inspection.listenSockets());
        }
        if (config.metricsListen() != null) {
            metricsHttp = MetricsEndpoint.start(
                    config.metricsListen(),
                    metrics.registry(),
                    List.of(new MetricsEndpoint.Probe("/healthz", status::everApplied, "not enforcing yet")));
            opened.add(metricsHttp);
            log.info("metrics on http://{}:{}/metrics", config.metricsListen().getHostString(), metricsHttp.port());
        }
    }

    /**
     * No state to enforce yet, but the node's pod ranges are known (--pod-cidr): the guard alone,
     * an empty state, so every new connection of a pod address is held until the control plane's
     * first snapshot knows it (and dropped, fail-open accepted, past the bound). Not kept in the
     * state file: it is no state of the cluster's.
     */
    private void guardAlone(Enforcer enforcer) {
        try {
            enforcer.enforce(NodeSnapshot.newBuilder().setNode(config.node()).build(), 0);
            log.info(
                    "enforcing the pod address guard alone on {} until the control plane's first snapshot",
                    config.guard().podCidrs());
        } catch (Exception e) {
            log.warn(
                    "could not enforce the pod address guard alone: {}; nothing is enforced until the control "
                            + "plane's first snapshot",
                    e.toString());
        }
    }

    /**
     * The pod address guard of a generation: the snapshot's pod ranges and --pod-cidr's, without
     * this node's own addresses (read now: a bridge's gateway address lies in the pod range).
     */
    private PodGuard podGuard(NodeSnapshot snapshot) {
        Set<String> cidrs = new TreeSet<>(config.guard().podCidrs());
        for (String cidr : snapshot.getPodCidrsList()) {
            if (Cidr.tryParse(cidr) != null) { // the assembler reported any other
                cidrs.add(cidr);
            }
        }
        return cidrs.isEmpty() ? PodGuard.NONE : PodGuard.of(cidrs, LocalAddresses.INTERFACES.get());
    }

    /** After each generation is enforced, the DNS table's watched pods follow it. */
    private Enforcer dnsAfter(Enforcer policy) {
        DnsTable table = dnsTable;
        return (snapshot, sequence) -> {
            policy.enforce(snapshot, sequence);
            table.program(WatchedAddresses.of(snapshot));
        };
    }

    /** What the DNS path learned from (inspection, tests). */
    public DnsLearner dnsLearner() {
        return learner;
    }

    /** When this JVM started, for the control plane's status (uptime). */
    private static com.google.protobuf.Timestamp processStart() {
        long millis = ManagementFactory.getRuntimeMXBean().getStartTime();
        return com.google.protobuf.Timestamp.newBuilder()
                .setSeconds(Math.floorDiv(millis, 1000))
                .setNanos((int) Math.floorMod(millis, 1000) * 1_000_000)
                .build();
    }

    static String kernelPath(QueuePath path) {
        return path == QueuePath.NFT_QUEUE ? "nft-queue" : "xtables-nfqueue";
    }

    public SyncStatus status() {
        return status;
    }

    public StateHolder state() {
        return state;
    }

    public int inspectPort() {
        return inspection == null ? -1 : inspection.port();
    }

    public int metricsPort() {
        return metricsHttp == null ? -1 : metricsHttp.port();
    }

    /** Clean stop ({@link AgentShutdown}): stop syncing, answer what is still queued, unbind, close the servers. */
    @Override
    public void close() {
        shutdown.run();
    }
}
