// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.observe;

import io.grpc.stub.ServerCallStreamObserver;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.proto.v1.VerdictHistoryEnd;
import io.kubeverdict.proto.v1.VerdictsLost;
import java.util.ArrayList;
import java.util.List;

/**
 * One ObserveVerdicts stream: its filter, what it missed, and (when it asked for held verdicts)
 * the switch from replaying them to following live ones without a gap or a repeat: live events
 * that arrive while it replays wait, and those the replay already held (by number) are skipped.
 */
final class VerdictObserver {
    final ObserveVerdictsRequest filter;
    private final ServerCallStreamObserver<ObservedVerdict> out;
    private long lost;
    private boolean replaying;
    private long replayedUpTo;
    private final List<RecentVerdicts.Held> waiting = new ArrayList<>();

    VerdictObserver(ObserveVerdictsRequest filter, ServerCallStreamObserver<ObservedVerdict> out) {
        this.filter = filter;
        this.out = out;
        this.replaying = wantsHistory();
    }

    boolean wantsHistory() {
        return filter.getLast() > 0
                || filter.getSince().getSeconds() > 0
                || filter.getSince().getNanos() > 0;
    }

    Verdict verdict() {
        return filter.getVerdict() == Verdict.UNRECOGNIZED ? Verdict.VERDICT_UNSPECIFIED : filter.getVerdict();
    }

    boolean wantsNode(String node) {
        return filter.getNode().isEmpty() || filter.getNode().equals(node);
    }

    boolean matches(VerdictEvent e) {
        Explanation x = e.getExplanation();
        if (!wantsNode(e.getNode())) {
            return false;
        }
        if (verdict() != Verdict.VERDICT_UNSPECIFIED && x.getVerdict() != verdict()) {
            return false;
        }
        if (filter.getStaged() && !x.hasStaged()) {
            return false; // an older agent sends all it has
        }
        if (!filter.getNamespace().isEmpty()
                && !(x.hasSource() && x.getSource().getNamespace().equals(filter.getNamespace()))
                && !(x.hasDestination() && x.getDestination().getNamespace().equals(filter.getNamespace()))) {
            return false;
        }
        return filter.getPod().isEmpty()
                || (x.hasSource() && name(x.getSource()).equals(filter.getPod()))
                || (x.hasDestination() && name(x.getDestination()).equals(filter.getPod()));
    }

    private static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    /**
     * Sends the held verdicts of the replay (bounded by the buffer's size, so sent whether or not
     * the stream is ready), the end-of-replay mark, then the live ones that waited meanwhile.
     */
    synchronized void replay(RecentVerdicts.Replay r) {
        try {
            for (VerdictEvent e : r.events()) {
                out.onNext(ObservedVerdict.newBuilder().setEvent(e).build());
            }
            out.onNext(ObservedVerdict.newBuilder()
                    .setHistoryEnd(VerdictHistoryEnd.newBuilder()
                            .setReplayed(r.events().size()))
                    .build());
        } catch (RuntimeException ex) {
            return; // cancelled meanwhile; the cancel handler removes it
        } finally {
            replayedUpTo = r.upTo();
            replaying = false;
        }
        for (RecentVerdicts.Held h : waiting) {
            offerLocked(h.seq(), h.event());
        }
        waiting.clear();
    }

    /**
     * Sends the live event (number {@code seq} in the buffer) if the stream can take it; false: it
     * is lost for this observer (counted). While replaying it waits; one the replay held is skipped.
     */
    synchronized boolean offer(long seq, VerdictEvent e) {
        if (replaying) {
            waiting.add(new RecentVerdicts.Held(seq, 0, e));
            return true;
        }
        return offerLocked(seq, e);
    }

    private boolean offerLocked(long seq, VerdictEvent e) {
        if (seq <= replayedUpTo) {
            return true; // the replay sent it already
        }
        if (!out.isReady()) {
            lost++;
            return false;
        }
        try {
            flushLostLocked();
            out.onNext(ObservedVerdict.newBuilder().setEvent(e).build());
            return true;
        } catch (RuntimeException ex) {
            return false; // cancelled meanwhile; the cancel handler removes it
        }
    }

    synchronized void lost(long n) {
        lost += n;
        if (out.isReady()) {
            flushLostLocked();
        }
    }

    synchronized void flushLost() {
        if (out.isReady()) {
            flushLostLocked();
        }
    }

    private void flushLostLocked() {
        if (lost > 0) {
            try {
                out.onNext(ObservedVerdict.newBuilder()
                        .setLost(VerdictsLost.newBuilder().setCount(lost))
                        .build());
                lost = 0;
            } catch (RuntimeException ignored) {
                // cancelled meanwhile
            }
        }
    }
}
