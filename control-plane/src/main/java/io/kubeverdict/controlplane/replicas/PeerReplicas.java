// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.replicas;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.ManagedChannel;
import io.kubeverdict.controlplane.receipts.PeerAnswers;
import io.kubeverdict.controlplane.receipts.PeerReceipts;
import io.kubeverdict.controlplane.receipts.PolicyRef;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListLocalReceiptsRequest;
import io.kubeverdict.proto.v1.LocalReceipts;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The other control-plane replicas, asked with ListLocalReceipts what the agents reporting to them
 * run: each agent streams from one replica, so this is how every replica answers `wait`, `status
 * --policies` and the conditions for every node. One round asks every peer at once, each bounded
 * by {@link #ASK_TIMEOUT}; a peer that fails leaves the round incomplete (its nodes' lag is then
 * unknown, never taken as enforced). A round about every policy is kept for {@link #KEEP_ROUND}, so
 * the writers' sweeps and operators' reads cost each peer at most one such question every 5 s (at 5000
 * nodes and 10k policies a round, answer and merge, took 45-95 ms: ReceiptChurnBenchmark.peerRound).
 */
public final class PeerReplicas implements PeerReceipts, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PeerReplicas.class);
    static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);
    static final Duration KEEP_ROUND = Duration.ofSeconds(5);

    /** A replica to ask: its name ("" until it answers, for a fixed list) and gRPC target. */
    public record Peer(String name, String target) {}

    /** Opens a channel to a peer's gRPC target (TLS and credentials as the deployment has them). */
    public interface Channels {
        ManagedChannel open(String target) throws IOException;
    }

    private final String self;
    private final Supplier<List<Peer>> peers;
    private final Channels channels;
    private final Map<String, ManagedChannel> open = new ConcurrentHashMap<>();
    private final Set<String> failing = ConcurrentHashMap.newKeySet();

    // The last round about every policy, guarded by this.
    private PeerAnswers kept;
    private int keptMaxLagging;
    private long keptAtNanos;

    /**
     * @param self this replica's name: a peer answering with it (a fixed list naming this replica
     *     too) is skipped
     */
    public PeerReplicas(String self, Supplier<List<Peer>> peers, Channels channels) {
        this.self = self;
        this.peers = peers;
        this.channels = channels;
    }

    @Override
    public PeerAnswers ask(Collection<PolicyRef> named, int maxLagging) {
        if (!named.isEmpty()) {
            return round(named, maxLagging);
        }
        synchronized (this) {
            if (kept != null
                    && keptMaxLagging >= maxLagging
                    && System.nanoTime() - keptAtNanos < KEEP_ROUND.toNanos()) {
                return kept;
            }
            kept = round(named, maxLagging);
            keptMaxLagging = maxLagging;
            keptAtNanos = System.nanoTime();
            return kept;
        }
    }

    private PeerAnswers round(Collection<PolicyRef> named, int maxLagging) {
        List<Peer> listed;
        try {
            listed = peers.get();
        } catch (RuntimeException e) {
            log.warn(
                    "could not list the peer replicas ({}); the lag of nodes reporting to them is unknown",
                    e.toString());
            return new PeerAnswers(List.of(), false);
        }
        List<Peer> others = new ArrayList<>();
        for (Peer p : listed) {
            if (!p.name().equals(self)) {
                others.add(p);
            }
        }
        closeGone(others);
        if (others.isEmpty()) {
            return PeerAnswers.ALONE;
        }
        ListLocalReceiptsRequest.Builder request =
                ListLocalReceiptsRequest.newBuilder().setMaxLagging(maxLagging);
        named.forEach(ref -> request.addPolicies(ref.toString()));
        List<ListenableFuture<LocalReceipts>> asked = new ArrayList<>(others.size());
        boolean complete = true;
        for (Peer p : others) {
            try {
                asked.add(ControlPlaneInspectionGrpc.newFutureStub(channel(p.target()))
                        .withDeadlineAfter(ASK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                        .listLocalReceipts(request.build()));
            } catch (IOException | RuntimeException e) {
                asked.add(null);
                failed(p, e);
            }
        }
        List<PeerAnswers.Answer> answers = new ArrayList<>(others.size());
        for (int i = 0; i < others.size(); i++) {
            Peer p = others.get(i);
            if (asked.get(i) == null) {
                complete = false;
                continue;
            }
            try {
                LocalReceipts r = asked.get(i).get(ASK_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
                if (failing.remove(p.target())) {
                    log.info("peer replica {} at {} answers again", r.getReplica(), p.target());
                }
                if (!r.getReplica().equals(self)) {
                    answers.add(PeerAnswers.Answer.of(r));
                }
            } catch (ExecutionException | TimeoutException e) {
                complete = false;
                failed(p, e instanceof ExecutionException ? e.getCause() : e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new PeerAnswers(answers, false);
            }
        }
        return new PeerAnswers(List.copyOf(answers), complete);
    }

    private ManagedChannel channel(String target) throws IOException {
        ManagedChannel c = open.get(target);
        if (c == null) {
            c = channels.open(target);
            ManagedChannel raced = open.putIfAbsent(target, c);
            if (raced != null) {
                c.shutdownNow();
                c = raced;
            }
        }
        return c;
    }

    /** Once per failure streak of a peer: its nodes are unknown until it answers again. */
    private void failed(Peer p, Throwable why) {
        if (failing.add(p.target())) {
            log.warn(
                    "peer replica {} at {} did not answer ({}); the lag of nodes that may report to it is unknown",
                    p.name().isEmpty() ? "?" : p.name(),
                    p.target(),
                    why.toString());
        }
    }

    private void closeGone(List<Peer> current) {
        Set<String> targets = new HashSet<>();
        current.forEach(p -> targets.add(p.target()));
        open.keySet().removeIf(target -> {
            if (targets.contains(target)) {
                return false;
            }
            ManagedChannel c = open.get(target);
            if (c != null) {
                c.shutdownNow();
            }
            failing.remove(target);
            return true;
        });
    }

    @Override
    public void close() {
        open.values().forEach(ManagedChannel::shutdownNow);
        open.clear();
    }
}
