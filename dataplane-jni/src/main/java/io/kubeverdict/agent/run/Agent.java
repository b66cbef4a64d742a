package io.kubeverdict.agent.run;

import io.grpc.ManagedChannel;
import io.kubeverdict.agent.inspect.AgentIdentity;
import io.kubeverdict.agent.inspect.AgentInspectionService;
import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.AgentMetrics;
import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.AppliedReporter;
import io.kubeverdict.agent.sync.Backoff;
import io.kubeverdict.agent.sync.ControlPlaneChannel;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.agent.sync.SyncClient;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.agent.verdict.VerdictLoop;
import io.kubeverdict.jni.NativeLibrary;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
 *   <li><b>Before the first InSync</b> the agent writes nothing to the kernel. If there is no table
 *       of ours, nothing is queued: all traffic passes. If a killed agent left one, it stays and
 *       its pods' new connections keep being queued; the agent answers them with the default
 *       verdict: accept with {@code --fail-open}, drop without. At InSync the table is replaced
 *       atomically by the current one.</li>
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
 * </ul>
 */
public final class Agent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    public static final String VERSION = BuildVersion.current();
    static final int BATCH = 64;

    private final AgentConfig config;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private Nftables nft;
    private NftManager manager;
    private KernelSets kernel;
    private SyncClient sync;
    private GrpcServer inspection;
    private MetricsEndpoint metricsHttp;
    private final SyncStatus status = new SyncStatus();
    private StateHolder state;

    private Agent(AgentConfig config) {
        this.config = config;
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
        NativeLibrary.ensureAvailable();
        Clock clock = Clock.systemUTC();
        nft = new Nftables();
        manager = NftManager.create(nft, config.table(), config.queueId(), config.failOpen(), config.queuePath());
        kernel = new KernelSets(manager);
        log.info("node {}: queue {} via {}, {}", config.node(), config.queueId(), kernelPath(manager.path()),
                config.failOpen() ? "fail-open" : "fail-closed");

        state = new StateHolder(config.failOpen() ? 1 : 0);
        NfQueue queue = new NfQueue(config.queueId(), NfQueue.FLAG_GSO | (config.failOpen() ? NfQueue.FLAG_FAIL_OPEN : 0));
        opened.add(queue);
        int queueId = config.queueId();
        AgentMetrics metrics = new AgentMetrics(status, state, () -> readQueue(queueId), clock);
        opened.add(metrics);
        VerdictFeed feed = new VerdictFeed(4096, state::current);
        StateHolder holder = state;
        // The judge reads the current generation (one volatile read) and offers the verdict to
        // watchers only when someone watches: nothing allocated per packet.
        Judge judge = packet -> {
            int code = holder.decide(packet);
            feed.publish(packet, code);
            return code;
        };
        VerdictLoop loop = new VerdictLoop(queue, BATCH, judge, metrics.verdicts(), config.failOpen());
        opened.add(loop); // closed before the queue (reverse order)
        opened.add(feed);

        if (config.inspectListen() != null) {
            AgentIdentity identity = new AgentIdentity(config.node(), VERSION, kernelPath(manager.path()),
                    config.queueId(), config.failOpen());
            // Health: NOT_SERVING until an in-sync state is in the kernel, then SERVING also while the
            // control plane is away (the agent keeps enforcing).
            inspection = GrpcServer.builder(config.inspectListen())
                    .service(new AgentInspectionService(identity, state, status, () -> readQueue(queueId), feed))
                    .build().start();
            opened.add(inspection);
            log.info("inspection gRPC on {}", inspection.listenSockets());
        }
        if (config.metricsListen() != null) {
            metricsHttp = MetricsEndpoint.start(config.metricsListen(), metrics.registry(),
                    List.of(new MetricsEndpoint.Probe("/healthz", status::everApplied, "not enforcing yet")));
            opened.add(metricsHttp);
            log.info("metrics on http://{}:{}/metrics", config.metricsListen().getHostString(), metricsHttp.port());
        }

        ManagedChannel channel = ControlPlaneChannel.open(config.controlPlane(), config.tls(), config.tokenFile());
        opened.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(2, TimeUnit.SECONDS);
        });
        AppliedReporter reporter = new AppliedReporter(channel, config.node(), VERSION);
        GrpcServer health = inspection;
        sync = new SyncClient(channel,
                SyncRequest.newBuilder().setNode(config.node()).setAgentVersion(VERSION).build(),
                () -> new SnapshotAssembler(config.node()),
                new StateEnforcer(state, kernel, clock),
                (sequence, eventTime) -> {
                    reporter.applied(sequence, eventTime);
                    metrics.applied(sequence, eventTime);
                    if (health != null) {
                        health.setServing(true);
                    }
                },
                Backoff.DEFAULT, () -> ThreadLocalRandom.current().nextDouble(), status).start();
        log.info("syncing from {}", config.controlPlane());
    }

    private static Optional<QueueCounters> readQueue(int queueId) {
        try {
            return QueueCounters.read(QueueCounters.PROC_FILE, queueId);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
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

    /**
     * Clean stop: stop syncing, answer what is still queued, unbind, close the servers. The table
     * is deleted only when configured so (fail-open, or --on-exit=remove): a fail-closed agent's
     * table stays, so that new connections of selected pods are dropped until the next agent is
     * in sync, exactly as after a crash — a rolling update never opens an unenforced gap.
     */
    @Override
    public synchronized void close() {
        if (sync != null) {
            sync.close();
            sync = null;
        }
        if (manager != null) {
            if (config.removeTableOnExit()) {
                try {
                    manager.remove();
                    log.info("nftables table {} removed", config.table());
                } catch (RuntimeException e) {
                    log.warn("could not remove nftables table {}: {}", config.table(), e.toString());
                }
            } else {
                log.info("nftables table {} kept: new connections of selected pods are dropped until an agent is back",
                        config.table());
            }
            manager = null;
        }
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", opened.get(i), e.toString());
            }
        }
        opened.clear();
        if (nft != null) {
            nft.close();
            nft = null;
        }
    }
}
