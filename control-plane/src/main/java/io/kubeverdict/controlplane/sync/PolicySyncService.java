// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import com.google.protobuf.Timestamp;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.calc.Labels;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.proto.v1.AppliedAck;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.VerdictDemand;
import io.kubeverdict.proto.v1.VerdictUpload;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PolicySync: one {@link SyncSession} per Sync stream, fed from the {@link SnapshotHub}; applied
 * reports turn into per-node lag and programming latency. Also the source of ListNodes.
 *
 * <p>State from clients is bounded: a node name must be a valid Kubernetes node name, the agent
 * version is cut to {@link #MAX_AGENT_VERSION} characters, and a name the calculation has never
 * published (not in the cluster) is forgotten, metrics included, when its last stream ends. Full
 * snapshots go out at most {@link Options#maxConcurrentSnapshots} at a time ({@link SnapshotAdmission}).
 */
public final class PolicySyncService implements PolicySyncGrpc.AsyncService, BindableService, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PolicySyncService.class);

    /** Longest agent version kept (it is the client's text). */
    static final int MAX_AGENT_VERSION = 128;

    /**
     * Tunables; defaults suit a real cluster.
     *
     * @param maxConcurrentSnapshots streams building and sending a full snapshot at once; the rest wait in line
     */
    public record Options(
            int maxMessageBytes, Duration stallTimeout, Duration sweepInterval, int maxConcurrentSnapshots) {
        public static final int DEFAULT_MAX_CONCURRENT_SNAPSHOTS = 16;

        public Options(int maxMessageBytes, Duration stallTimeout, Duration sweepInterval) {
            this(maxMessageBytes, stallTimeout, sweepInterval, DEFAULT_MAX_CONCURRENT_SNAPSHOTS);
        }

        public static Options defaults() {
            return new Options(1 << 20, Duration.ofSeconds(60), Duration.ofSeconds(1));
        }

        public Options withMaxConcurrentSnapshots(int n) {
            return new Options(maxMessageBytes, stallTimeout, sweepInterval, n);
        }
    }

    private final SnapshotHub hub;
    private final ControlPlaneMetrics metrics;
    private final NodeAuthorizer authorizer;
    private final Options options;
    private final SnapshotDiff differ;
    private final SnapshotAdmission admission;
    private final SendQueue senders;
    private final ScheduledExecutorService sweeper;
    private final Map<String, NodeRecord> nodes = new ConcurrentHashMap<>();

    /** Told each applied report as (node, snapshot version applied, unix nanos): the enforcement receipts. */
    public interface AppliedVersions {
        void applied(String node, long version, long nowUnixNanos);

        /** The node's record is gone (a name not in the cluster whose last stream ended). */
        void forget(String node);
    }

    private volatile AppliedVersions appliedVersions = new AppliedVersions() {
        @Override
        public void applied(String node, long version, long nowUnixNanos) {}

        @Override
        public void forget(String node) {}
    };

    /** Where ReportVerdicts streams go (kube-verdict observe); null: the RPC is unimplemented. */
    private volatile Function<ServerCallStreamObserver<VerdictDemand>, StreamObserver<VerdictUpload>> verdictUploads;

    public PolicySyncService(
            SnapshotHub hub,
            ControlPlaneMetrics metrics,
            NodeAuthorizer authorizer,
            Executor executor,
            Options options) {
        this.hub = hub;
        this.metrics = metrics;
        this.authorizer = authorizer;
        this.options = options;
        // As many runners as CPUs: the control plane's sender pool has that many threads.
        this.senders = new SendQueue(executor, Math.max(2, Runtime.getRuntime().availableProcessors()));
        this.differ = new SnapshotDiff(options.maxMessageBytes(), hub.setHistory());
        this.admission = new SnapshotAdmission(options.maxConcurrentSnapshots());
        metrics.snapshotAdmission(admission::waiting, admission::inUse);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sync-stall-sweeper");
            t.setDaemon(true);
            return t;
        });
        long every = options.sweepInterval().toMillis();
        sweeper.scheduleWithFixedDelay(FatalThreads.guard(this::cutStalled), every, every, TimeUnit.MILLISECONDS);
        metrics.nodeCounts(this::nodeCounts);
    }

    /** How the nodes' agents stand, for the bounded node-state gauges (no per-node label). */
    ControlPlaneMetrics.NodeCounts nodeCounts() {
        int inSync = 0;
        int behind = 0;
        int syncing = 0;
        int disconnected = 0;
        long maxLag = 0;
        for (NodeRecord r : nodes.values()) {
            SyncSession s = r.latest();
            if (r.sessions.isEmpty() || s == null) {
                disconnected++;
                continue;
            }
            long lag = Math.max(0, s.sentSequence() - s.appliedSequence());
            maxLag = Math.max(maxLag, lag);
            if (s.appliedSequence() == 0) {
                syncing++; // the agent reports only once its first snapshot is enforced
            } else if (lag > 0) {
                behind++;
            } else {
                inSync++;
            }
        }
        return new ControlPlaneMetrics.NodeCounts(inSync, behind, syncing, disconnected, maxLag);
    }

    /**
     * The generated binding, except that Sync sends {@link StampedMessage}s: the same ToAgent
     * bytes on the wire (same method name, request type and schema for reflection), written from
     * payloads that streams share instead of being serialized once per stream.
     */
    @Override
    public ServerServiceDefinition bindService() {
        ServerServiceDefinition generated = PolicySyncGrpc.bindService(this);
        MethodDescriptor<SyncRequest, ToAgent> plain = PolicySyncGrpc.getSyncMethod();
        MethodDescriptor<SyncRequest, StampedMessage> stamped = plain.toBuilder(
                        plain.getRequestMarshaller(), StampedMessage.MARSHALLER)
                .build();
        ServiceDescriptor generatedService = generated.getServiceDescriptor();
        ServiceDescriptor.Builder service = ServiceDescriptor.newBuilder(generatedService.getName())
                .setSchemaDescriptor(generatedService.getSchemaDescriptor());
        for (MethodDescriptor<?, ?> m : generatedService.getMethods()) {
            service.addMethod(m.getFullMethodName().equals(plain.getFullMethodName()) ? stamped : m);
        }
        ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(service.build());
        out.addMethod(stamped, ServerCalls.asyncServerStreamingCall(this::syncStamped));
        for (ServerMethodDefinition<?, ?> m : generated.getMethods()) {
            if (!m.getMethodDescriptor().getFullMethodName().equals(plain.getFullMethodName())) {
                out.addMethod(m);
            }
        }
        return out.build();
    }

    private void syncStamped(SyncRequest request, StreamObserver<StampedMessage> responseObserver) {
        String node = request.getNode();
        if (node.isEmpty()) {
            responseObserver.onError(
                    Status.INVALID_ARGUMENT.withDescription("node is required").asRuntimeException());
            return;
        }
        if (!Labels.isDnsSubdomain(node)) {
            responseObserver.onError(Status.INVALID_ARGUMENT
                    .withDescription("node must be a Kubernetes node name (DNS subdomain, at most 253 characters)")
                    .asRuntimeException());
            return;
        }
        Status auth = authorizer.authorize(node);
        if (!auth.isOk()) {
            responseObserver.onError(auth.asRuntimeException());
            return;
        }
        String version = request.getAgentVersion();
        if (version.length() > MAX_AGENT_VERSION) {
            int cut = Character.isHighSurrogate(version.charAt(MAX_AGENT_VERSION - 1))
                    ? MAX_AGENT_VERSION - 1
                    : MAX_AGENT_VERSION;
            version = version.substring(0, cut);
        }
        ServerCallStreamObserver<StampedMessage> out = (ServerCallStreamObserver<StampedMessage>) responseObserver;
        SyncSession session =
                new SyncSession(node, version, out, hub, differ, admission, senders, metrics, System::nanoTime);
        session.resumeFrom(request.getResumeDigest());
        // compute(): a record is created, joined and dropped atomically per node.
        nodes.compute(node, (n, r) -> {
            NodeRecord rec = r == null ? new NodeRecord(n) : r;
            rec.open(session);
            rec.connected(request);
            return rec;
        });
        metrics.streamOpened();
        log.info(
                "agent for node {} connected (version {}{}){}",
                node,
                version,
                request.getResumeDigest().isEmpty() ? "" : ", resuming",
                hub.isKnown(node) ? "" : "; the node is not in the cluster (yet)");
        session.onClosed(() -> {
            nodes.computeIfPresent(node, (n, r) -> {
                if (r.closed(session)) {
                    appliedVersions.forget(n);
                    return null;
                }
                return r;
            });
            metrics.streamClosed();
            log.info("agent for node {} disconnected", node);
        });
        out.setOnCancelHandler(session::close);
        out.setOnReadyHandler(session::wake);
        session.start();
    }

    @Override
    public void reportApplied(AppliedReport request, StreamObserver<AppliedAck> responseObserver) {
        Status auth = authorizer.authorize(request.getNode());
        if (!auth.isOk()) {
            responseObserver.onError(auth.asRuntimeException());
            return;
        }
        NodeRecord record = nodes.get(request.getNode());
        SyncSession session = record == null ? null : record.latest();
        if (session == null) {
            responseObserver.onError(Status.FAILED_PRECONDITION
                    .withDescription("no Sync stream open for node " + request.getNode())
                    .asRuntimeException());
            return;
        }
        long now = unixNanos();
        record.contact(now);
        if (!request.getHeartbeat()) { // a heartbeat only says the agent is alive
            session.applied(request.getAppliedSequence(), now);
            appliedVersions.applied(request.getNode(), session.appliedVersion(), now);
            record.gaugeIfKnown();
        }
        responseObserver.onNext(AppliedAck.getDefaultInstance());
        responseObserver.onCompleted();
    }

    /** Tells applied snapshot versions to this listener (set before agents connect). */
    public void reportAppliedVersionsTo(AppliedVersions listener) {
        this.appliedVersions = listener;
    }

    /** Accepts agents' ReportVerdicts streams with this handler (the verdict relay). */
    public void acceptVerdictUploads(
            Function<ServerCallStreamObserver<VerdictDemand>, StreamObserver<VerdictUpload>> handler) {
        this.verdictUploads = handler;
    }

    @Override
    public StreamObserver<VerdictUpload> reportVerdicts(StreamObserver<VerdictDemand> responseObserver) {
        var handler = verdictUploads;
        if (handler == null) {
            return PolicySyncGrpc.AsyncService.super.reportVerdicts(responseObserver);
        }
        return handler.apply((ServerCallStreamObserver<VerdictDemand>) responseObserver);
    }

    /** Nodes that have (or had, if known to the cluster) an agent, by name. */
    public List<NodeStatus> nodeStatuses() {
        Map<String, NodeStatus> out = new TreeMap<>();
        nodes.forEach((name, r) -> out.put(name, r.status()));
        return new ArrayList<>(out.values());
    }

    /** Nodes with at least one open stream to this replica: the ones whose applied reports it hears. */
    public Set<String> connectedNodes() {
        Set<String> out = new HashSet<>();
        nodes.forEach((name, r) -> {
            if (!r.sessions.isEmpty()) {
                out.add(name);
            }
        });
        return out;
    }

    /** Open sessions of a node (for tests and diagnostics). */
    List<SyncSession> sessionsOf(String node) {
        NodeRecord r = nodes.get(node);
        return r == null ? List.of() : List.copyOf(r.sessions);
    }

    private void cutStalled() {
        long timeout = options.stallTimeout().toNanos();
        for (NodeRecord r : nodes.values()) {
            for (SyncSession s : r.sessions) {
                if (s.cutIfStalled(timeout)) {
                    log.warn(
                            "cut the Sync stream of node {}: not ready for more than {}",
                            s.node(),
                            options.stallTimeout());
                }
            }
        }
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }

    static long unixNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** What is known about one node's agent(s); the newest stream is the one that reports refer to. */
    private final class NodeRecord {
        final String node;
        final CopyOnWriteArrayList<SyncSession> sessions = new CopyOnWriteArrayList<>();
        private volatile SyncSession last;
        private final LatencyWindow latencies = new LatencyWindow(256);
        private volatile long lastContactUnixNanos;
        private volatile Timestamp agentStart;
        private AutoCloseable lagGauge;

        NodeRecord(String node) {
            this.node = node;
        }

        synchronized void open(SyncSession s) {
            sessions.add(s);
            last = s;
            s.onLatency(latencies::add);
            gaugeIfKnown();
        }

        /** The lag series exists only for nodes of the cluster with a stream: names from clients add none. */
        synchronized void gaugeIfKnown() {
            if (lagGauge == null && !sessions.isEmpty() && hub.isKnown(node)) {
                lagGauge = metrics.nodeGauge(
                        "kubeverdict_node_lag_messages",
                        "Messages sent to the node's agent but not yet reported applied",
                        node,
                        this,
                        r -> r.lag());
            }
        }

        void connected(SyncRequest request) {
            agentStart = request.hasAgentStartTime() ? request.getAgentStartTime() : null;
            contact(unixNanos());
        }

        void contact(long unixNanos) {
            lastContactUnixNanos = unixNanos;
        }

        /** Forgets the stream; returns whether the whole record should go (last stream of an unknown node). */
        synchronized boolean closed(SyncSession s) {
            sessions.remove(s);
            if (sessions.isEmpty() && lagGauge != null) {
                try {
                    lagGauge.close();
                } catch (Exception ignored) {
                    // Removing a meter does not fail.
                }
                lagGauge = null;
            }
            return sessions.isEmpty() && !hub.isKnown(node);
        }

        SyncSession latest() {
            return last;
        }

        double lag() {
            SyncSession s = last;
            return s == null ? 0 : Math.max(0, s.sentSequence() - s.appliedSequence());
        }

        NodeStatus status() {
            SyncSession s = last;
            NodeStatus.Builder b = NodeStatus.newBuilder().setNode(node).setConnected(!sessions.isEmpty());
            if (s != null) {
                // Revision first: it is written after the sequence it covers.
                b.setSourceRevision(s.sentRevision());
                b.setAgentVersion(s.agentVersion())
                        .setSentSequence(s.sentSequence())
                        .setAppliedSequence(s.appliedSequence())
                        .setLag(Math.max(0, s.sentSequence() - s.appliedSequence()))
                        // The agent reports only once its first snapshot is enforced.
                        .setInSync(!sessions.isEmpty() && s.appliedSequence() > 0);
            }
            if (latencies.size() > 0) {
                b.setProgrammingLatencyP50(Durations.fromNanos(latencies.quantile(0.5)))
                        .setProgrammingLatencyP99(Durations.fromNanos(latencies.quantile(0.99)))
                        .setProgrammingLatencySamples(latencies.size());
            }
            if (agentStart != null) {
                b.setAgentStartTime(agentStart);
            }
            if (lastContactUnixNanos != 0) {
                b.setLastContact(Timestamps.fromNanos(lastContactUnixNanos));
            }
            return b.build();
        }
    }
}
