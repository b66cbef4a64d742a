// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.observe;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.flows.PartialVerdicts;
import io.kubeverdict.controlplane.inspect.EndpointDirectory;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictDemand;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.proto.v1.VerdictUpload;
import io.kubeverdict.runtime.logging.LogLimiter;
import io.micrometer.core.instrument.Counter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * `kube-verdict observe`, the control plane's half (hubble-relay's job): agents keep one
 * ReportVerdicts stream each; observers follow ObserveVerdicts. Agents are told to send only while
 * someone observes their node, and only the verdict kind every such observer wants (so a cluster
 * nobody observes uploads nothing). Each event is completed with the names of endpoints its agent
 * does not hold (the other node's pod), filtered per observer and sent only to observers that are
 * ready; what an observer misses, and what agents report lost, reaches it as a VerdictsLost count.
 */
public final class VerdictRelay {
    private static final Logger log = LoggerFactory.getLogger(VerdictRelay.class);
    private static final long DIRECTORY_MAX_AGE = 1_000_000_000L;
    /** Verdicts held for `observe --last/--since`: at ~1-2 KB an event, a few MB at most. */
    static final int HELD_VERDICTS = 4096;

    private final SnapshotHub hub;
    private final NodeAuthorizer authorizer;
    private final LongSupplier nanoTime;
    private final Map<String, Uplink> uplinks = new ConcurrentHashMap<>();
    private final List<VerdictObserver> observers = new CopyOnWriteArrayList<>();
    private final Counter relayed;
    private final Counter lost;
    private final Counter refused;
    private final LogLimiter refusals = new LogLimiter(1, TimeUnit.MINUTES);
    private volatile Directory directory;
    private final RecentVerdicts recent = new RecentVerdicts(HELD_VERDICTS);
    /** Where every relayed event also goes (the flow history); null: only to observers, on demand. */
    private volatile Consumer<VerdictEvent> recorder;

    private record Directory(long builtAt, EndpointDirectory endpoints) {}

    public VerdictRelay(SnapshotHub hub, NodeAuthorizer authorizer, ControlPlaneMetrics metrics) {
        this(hub, authorizer, metrics, System::nanoTime);
    }

    VerdictRelay(SnapshotHub hub, NodeAuthorizer authorizer, ControlPlaneMetrics metrics, LongSupplier nanoTime) {
        this.hub = hub;
        this.authorizer = authorizer;
        this.nanoTime = nanoTime;
        metrics.relayGauge(
                "kubeverdict_verdict_observers",
                "Open ObserveVerdicts streams (kube-verdict observe)",
                observers::size);
        metrics.relayGauge(
                "kubeverdict_verdict_events_held",
                "Recent relayed verdict events held for observe --last/--since (at most " + HELD_VERDICTS + ")",
                recent::size);
        metrics.relayGauge("kubeverdict_verdict_uplinks", "Agents with an open ReportVerdicts stream", uplinks::size);
        relayed = metrics.relayCounter(
                "kubeverdict_verdict_events_relayed_total",
                "Verdict events sent to observers (one per observer that received it)");
        refused = metrics.relayCounter(
                "kubeverdict_verdict_events_refused_total",
                "Verdict events dropped because they named a pod the control plane places on another node than the "
                        + "reporting agent's");
        lost = metrics.relayCounter(
                "kubeverdict_verdict_events_lost_total",
                "Verdict events observers missed: lost on agents (sampled, queue full) or the observer was not reading");
    }

    // ------------------------------------------------------------------ agents

    /** PolicySync.ReportVerdicts: the first upload names the node (its certificate must name it too). */
    public StreamObserver<VerdictUpload> upload(ServerCallStreamObserver<VerdictDemand> demands) {
        AtomicReference<Uplink> opened = new AtomicReference<>();
        demands.setOnCancelHandler(() -> closed(opened.get())); // only allowed before this method returns
        return new StreamObserver<>() {
            private Uplink uplink;

            @Override
            public void onNext(VerdictUpload upload) {
                if (uplink == null && !open(upload)) {
                    return;
                }
                if (uplink == null || uplink.closed) {
                    return;
                }
                for (VerdictEvent e : upload.getEventsList()) {
                    relay(uplink.node, e);
                }
                long lostNow = upload.getLost();
                if (lostNow > uplink.lostSeen) {
                    long delta = lostNow - uplink.lostSeen;
                    uplink.lostSeen = lostNow;
                    for (VerdictObserver o : observers) {
                        if (o.wantsNode(uplink.node)) {
                            o.lost(delta);
                            lost.increment(delta);
                        }
                    }
                }
            }

            private boolean open(VerdictUpload first) {
                String node = first.getNode();
                Status status = node.isEmpty()
                        ? Status.INVALID_ARGUMENT.withDescription("the first VerdictUpload must name the node")
                        : authorizer.authorize(node);
                if (!status.isOk()) {
                    demands.onError(status.asRuntimeException());
                    return false;
                }
                Uplink u = new Uplink(node, demands);
                uplink = u;
                opened.set(u);
                Uplink previous = uplinks.put(node, u);
                if (previous != null) {
                    previous.close(); // the agent reconnected; its old stream is done
                }
                u.demand(demandFor(node));
                log.debug("verdict uplink of node {} open", node);
                return true;
            }

            @Override
            public void onError(Throwable t) {
                closed(uplink);
            }

            @Override
            public void onCompleted() {
                Uplink u = uplink;
                closed(u);
                if (u != null) {
                    u.complete();
                } else {
                    demands.onCompleted();
                }
            }
        };
    }

    private void closed(Uplink u) {
        if (u != null) {
            u.closed = true;
            uplinks.remove(u.node, u);
        }
    }

    /**
     * Sends every event to this recorder too, from now on; agents are then asked for every verdict
     * all the time (the flow history wants them whether or not someone observes).
     */
    public void recordInto(Consumer<VerdictEvent> recorder) {
        this.recorder = recorder;
        demandsChanged();
    }

    /** Where a pod runs and whether a tier selects it, as published (the flow history's placement of verdicts). */
    public Optional<PartialVerdicts.Placed> placed(String namespacedName) {
        return locate(namespacedName)
                .map(l -> PartialVerdicts.Placed.of(l.node(), l.endpoint().getEndpoint()));
    }

    /** A pod ("namespace/name") as the published snapshots hold it (node, labels, tiers); empty when they do not. */
    public Optional<EndpointDirectory.Located> locate(String namespacedName) {
        return directory().byName(namespacedName);
    }

    /**
     * What the node's agent should send: anything some observer of that node (or the recorder) might
     * want; with no observer of the node, the recorder's verdicts may come a second late.
     */
    VerdictDemand demandFor(String node) {
        if (recorder != null) {
            return VerdictDemand.newBuilder()
                    .setWanted(true)
                    .setVerdict(Verdict.VERDICT_UNSPECIFIED)
                    .setHistoryOnly(observers.stream().noneMatch(o -> o.wantsNode(node)))
                    .build();
        }
        boolean wanted = false;
        boolean stagedOnly = true;
        Verdict common = null;
        for (VerdictObserver o : observers) {
            if (o.wantsNode(node)) {
                Verdict v = o.verdict();
                common = !wanted ? v : common == v ? common : Verdict.VERDICT_UNSPECIFIED;
                stagedOnly &= o.filter.getStaged();
                wanted = true;
            }
        }
        return VerdictDemand.newBuilder()
                .setWanted(wanted)
                .setVerdict(wanted ? common : Verdict.VERDICT_UNSPECIFIED)
                .setStaged(wanted && stagedOnly)
                .build();
    }

    private void demandsChanged() {
        uplinks.values().forEach(u -> u.demand(demandFor(u.node)));
    }

    // ------------------------------------------------------------------ observers

    /**
     * ControlPlaneInspection.ObserveVerdicts: until the observer cancels; first the held verdicts
     * it asked for (last, since), then live ones.
     */
    public void observe(ObserveVerdictsRequest request, ServerCallStreamObserver<ObservedVerdict> out) {
        var since = request.getSince();
        if (since.getSeconds() < 0 || since.getNanos() < 0) {
            out.onError(Status.INVALID_ARGUMENT
                    .withDescription("since must not be negative")
                    .asRuntimeException());
            return;
        }
        VerdictObserver o = new VerdictObserver(request, out);
        out.setOnCancelHandler(() -> {
            observers.remove(o);
            demandsChanged();
        });
        out.setOnReadyHandler(o::flushLost);
        observers.add(o); // before the replay is taken: a live event is then held by it or offered (or both)
        demandsChanged();
        if (o.wantsHistory()) {
            // Over a century means any time (and keeps the nanoseconds from overflowing).
            Long sinceNanos = request.hasSince() && since.getSeconds() < 3_153_600_000L
                    ? nanoTime.getAsLong() - (since.getSeconds() * 1_000_000_000L + since.getNanos())
                    : null;
            o.replay(recent.matching(o::matches, request.getLast(), sinceNanos));
        }
    }

    private void relay(String node, VerdictEvent event) {
        VerdictEvent named = name(node, event.toBuilder().setNode(node).build()); // an agent speaks only for its node
        if (named == null) {
            refused.increment();
            long suppressed = refusals.tryAcquire();
            if (suppressed >= 0) {
                log.warn(
                        "dropped a verdict event of node {} naming a pod of another node ({} more since the last "
                                + "line): an agent speaks for its own node's pods only",
                        node,
                        suppressed);
            }
            return;
        }
        var r = recorder;
        if (r != null) {
            r.accept(named);
        }
        long seq = recent.add(named, nanoTime.getAsLong());
        for (VerdictObserver o : observers) {
            if (o.matches(named)) {
                if (o.offer(seq, named)) {
                    relayed.increment();
                } else {
                    lost.increment();
                }
            }
        }
    }

    /**
     * Checks what the agent named and names what it did not hold (the far side of a connection);
     * null for an event that names a pod the published snapshots place on another node (audit
     * L10: a compromised node could otherwise put verdicts in other nodes' pods' names). A name
     * the snapshots do not know is left as it is (a pod just gone or not yet published). The far
     * side is named by address only when the event involves the reporting node (the agent named
     * one side, or an address is its pod's), so a node cannot make up verdicts between other
     * nodes' pods that observers would see under their names.
     */
    private VerdictEvent name(String node, VerdictEvent e) {
        Explanation x = e.getExplanation();
        EndpointDirectory endpoints = directory();
        for (EndpointId named : List.of(x.getSource(), x.getDestination())) {
            if (!named.equals(EndpointId.getDefaultInstance())) {
                var located = endpoints.byName(named.getNamespace() + "/" + named.getPod());
                if (located.isPresent() && !located.get().node().equals(node)) {
                    return null;
                }
            }
        }
        if (x.hasSource() && x.hasDestination()) {
            return e;
        }
        var source = x.hasSource()
                ? Optional.<EndpointDirectory.Located>empty()
                : endpoints.byIp(x.getTuple().getSrcIp());
        var destination = x.hasDestination()
                ? Optional.<EndpointDirectory.Located>empty()
                : endpoints.byIp(x.getTuple().getDstIp());
        boolean involvesNode = x.hasSource()
                || x.hasDestination()
                || source.filter(l -> l.node().equals(node)).isPresent()
                || destination.filter(l -> l.node().equals(node)).isPresent();
        if (!involvesNode) {
            return e;
        }
        Explanation.Builder b = x.toBuilder();
        source.ifPresent(l -> b.setSource(l.endpoint().getId()));
        destination.ifPresent(l -> b.setDestination(l.endpoint().getId()));
        return e.toBuilder().setExplanation(b).build();
    }

    /** Endpoints by address from the published snapshots, rebuilt at most once a second. */
    private EndpointDirectory directory() {
        Directory d = directory;
        long now = nanoTime.getAsLong();
        if (d == null || now - d.builtAt() > DIRECTORY_MAX_AGE) {
            d = new Directory(now, new EndpointDirectory(hub.all()));
            directory = d;
        }
        return d.endpoints();
    }

    private static final class Uplink {
        final String node;
        private final ServerCallStreamObserver<VerdictDemand> out;
        private VerdictDemand last;
        volatile boolean closed;
        long lostSeen; // the upload thread only

        Uplink(String node, ServerCallStreamObserver<VerdictDemand> out) {
            this.node = node;
            this.out = out;
        }

        synchronized void demand(VerdictDemand d) {
            if (closed || d.equals(last)) {
                return;
            }
            try {
                out.onNext(d);
                last = d;
            } catch (RuntimeException e) {
                closed = true; // cancelled meanwhile
            }
        }

        synchronized void close() {
            if (!closed) {
                closed = true;
                try {
                    out.onCompleted();
                } catch (RuntimeException ignored) {
                    // already cancelled
                }
            }
        }

        synchronized void complete() {
            try {
                out.onCompleted();
            } catch (RuntimeException ignored) {
                // already cancelled
            }
        }
    }
}
