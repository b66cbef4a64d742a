// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.ConntrackQuery.Match;
import io.kubeverdict.jni.NativeException;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.EndpointId;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of the re-judging over a batch of endpoints, by one generation: which dumps (two per
 * IPv4 address while that makes at most {@value #MAX_ADDRESS_DUMPS}, else one by mark alone;
 * always one by mark alone for IPv6), which entries of a dump are the batch's connections, each
 * judged once and marked, and what was examined, cut, and is to be retried. Nothing it keeps
 * grows with the connections: entries are judged as a dump streams them. Re-judging thread only.
 */
final class RejudgePass {
    private static final Logger log = LoggerFactory.getLogger(RejudgePass.class);
    /** Per-address dumps (2 per address) a pass may make before it dumps by mark alone. */
    static final int MAX_ADDRESS_DUMPS = 32;

    private static final List<Match> DIRECTIONS = List.of(Match.ORIGINAL_SOURCE, Match.REPLY_SOURCE);
    private static final int TCP_TIME_WAIT = 7;
    private static final int TCP_CLOSE = 8;

    private final TableDumps dumps;
    private final LocalAddresses localAddresses;
    private final CutSink sink;
    private final RejudgeObserver observer;
    private final LongSupplier nanoTime;
    private final EnforcedState state;
    private final SnapshotIndex index;
    private final LearnedAddresses learned;
    private final PacketTuple tuple = new PacketTuple();
    private final Map<EndpointId, PendingEndpoint> failed = new LinkedHashMap<>();
    private AddressIndex local;
    private int examined;
    private int cut;
    private int vanished;

    RejudgePass(
            TableDumps dumps,
            LocalAddresses localAddresses,
            CutSink sink,
            RejudgeObserver observer,
            LongSupplier nanoTime,
            EnforcedState state,
            LearnedAddresses learned) {
        this.dumps = dumps;
        this.localAddresses = localAddresses;
        this.sink = sink;
        this.observer = observer;
        this.nanoTime = nanoTime;
        this.state = state;
        this.index = state.index();
        this.learned = learned;
    }

    /** Judges the connections of the batch's endpoints; returns those to retry. */
    Map<EndpointId, PendingEndpoint> run(Collection<PendingEndpoint> batch) {
        dumps.open();
        FamilyTargets v4 = FamilyTargets.of(IpAddress.V4, batch);
        FamilyTargets v6 = FamilyTargets.of(IpAddress.V6, batch);
        if (2 * v4.size() <= MAX_ADDRESS_DUMPS) {
            addressDumps(v4);
        } else {
            familyDump(v4);
        }
        if (v6.size() > 0) {
            familyDump(v6); // the kernel cannot filter IPv6 addresses (see ConntrackRejudger)
        }
        if (cut > 0 || !failed.isEmpty()) {
            log.info(
                    "sequence {}: judged {} established connections of {} endpoints again, cut {}{}{}",
                    state.sequence(),
                    examined,
                    batch.size(),
                    cut,
                    vanished > 0 ? ", " + vanished + " gone before their cut" : "",
                    failed.isEmpty() ? "" : "; " + failed.size() + " endpoints to retry");
        } else {
            log.debug(
                    "sequence {}: judged {} established connections of {} endpoints again, none cut",
                    state.sequence(),
                    examined,
                    batch.size());
        }
        return failed;
    }

    /**
     * Two dumps per IPv4 address, numbered 2k (opened from address k) and 2k + 1 (opened to it). A
     * connection between two of the addresses (or from one to itself) is in two dumps; it is judged
     * in the first, decided from its tuple and mark rather than remembered, so memory does not grow
     * with the connections and two entries with the same (hashed, 32-bit) conntrack id stay apart.
     */
    private void addressDumps(FamilyTargets targets) {
        for (int k = 0; k < targets.size(); k++) {
            for (Match match : DIRECTIONS) {
                int position = 2 * k + (match == Match.ORIGINAL_SOURCE ? 0 : 1);
                ConntrackQuery q = targets.unjudged(k)
                        ? ConntrackQuery.of(targets.address(k), match, 0, FlowMarks.CUT)
                        : ConntrackQuery.of(targets.address(k), match, FlowMarks.ADMITTED, FlowMarks.OURS);
                int at = k;
                boolean done = dumps.dump(q, chunk -> {
                    for (int i = 0; i < chunk.size(); i++) {
                        if (!inEarlierDump(chunk, i, targets, position)) {
                            judge(chunk, i, targets, at);
                        }
                    }
                });
                if (!done) {
                    retry(targets, k);
                }
            }
        }
    }

    /**
     * Whether an earlier dump of the pass delivered entry i too. Its mark then is taken to be its
     * mark now: marks only gain bits (a cut entry leaves every later dump), and one that gained
     * ADMITTED since had a packet judged, or answered from the cache, by this generation or a
     * newer one.
     */
    private static boolean inEarlierDump(ConntrackEntries e, int i, FamilyTargets targets, int position) {
        int mark = e.mark(i);
        int from = targets.indexOf(e.originalSourceWord(i, 0), e.originalSourceWord(i, 1));
        if (from >= 0 && 2 * from < position && targets.wants(from, mark)) {
            return true;
        }
        int to = targets.indexOf(e.replySourceWord(i, 0), e.replySourceWord(i, 1));
        return to >= 0 && 2 * to + 1 < position && targets.wants(to, mark);
    }

    /** One dump of a family, filtered by mark in the kernel, matched against the batch's addresses here. */
    private void familyDump(FamilyTargets targets) {
        ConntrackQuery q = targets.anyUnjudged()
                ? ConntrackQuery.marked(targets.family(), 0, FlowMarks.CUT)
                : ConntrackQuery.marked(targets.family(), FlowMarks.ADMITTED, FlowMarks.OURS);
        boolean done = dumps.dump(q, chunk -> {
            for (int i = 0; i < chunk.size(); i++) {
                int mark = chunk.mark(i);
                int k = targets.indexOf(chunk.originalSourceWord(i, 0), chunk.originalSourceWord(i, 1));
                if (!targets.wants(k, mark)) {
                    k = targets.indexOf(chunk.replySourceWord(i, 0), chunk.replySourceWord(i, 1));
                }
                if (targets.wants(k, mark)) {
                    judge(chunk, i, targets, k);
                }
            }
        });
        if (!done) {
            for (int k = 0; k < targets.size(); k++) {
                retry(targets, k);
            }
        }
    }

    /** Address k's endpoints are retried. */
    private void retry(FamilyTargets targets, int k) {
        for (PendingEndpoint p : targets.owners(k)) {
            failed.put(p.target().id(), p);
        }
    }

    /** Judges entry i, a connection from or to address k of {@code targets}. */
    private void judge(ConntrackEntries e, int i, FamilyTargets targets, int k) {
        int mark = e.mark(i);
        if ((mark & FlowMarks.CUT) != 0) {
            return;
        }
        int tcp = e.tcpState(i);
        if (tcp == TCP_TIME_WAIT || tcp == TCP_CLOSE) {
            return; // over already; a new connection with this tuple gets a new entry
        }
        boolean admitted = (mark & FlowMarks.ADMITTED) != 0;
        if (!admitted && openedByTheNode(e, i)) {
            return; // the data plane never judges those
        }
        fill(e, i);
        int code = index.decide(tuple, learned);
        examined++;
        observer.examined();
        try {
            if (Decision.allowed(code)) {
                if (!admitted) {
                    dumps.setMark(e, i, FlowMarks.ADMITTED, FlowMarks.ADMITTED);
                }
                return;
            }
            if (dumps.setMark(e, i, FlowMarks.CUT, FlowMarks.OURS)) {
                cut++;
                observer.cut(e.protocol(i), nanoTime.getAsLong() - targets.sinceNanos(k));
                sink.cut(tuple, e.hasPorts(i) ? e.originalSourcePort(i) : 0, e.id(i), code, state);
            } else {
                vanished++;
                observer.vanished();
            }
        } catch (NativeException ex) {
            observer.cutFailed(ex.errno());
            retry(targets, k);
            log.warn("could not mark {}: {}", e.describe(i), ex.getMessage());
        }
    }

    private boolean openedByTheNode(ConntrackEntries e, int i) {
        if (local == null) {
            local = AddressIndex.of(localAddresses.get());
        }
        return local.indexOf(e.family(i), e.originalSourceWord(i, 0), e.originalSourceWord(i, 1)) >= 0;
    }

    /** The connection as its first packet was judged: opener -> answerer (after DNAT), its port. */
    private void fill(ConntrackEntries e, int i) {
        tuple.family = e.family(i);
        tuple.srcHi = e.originalSourceWord(i, 0);
        tuple.srcLo = e.originalSourceWord(i, 1);
        tuple.dstHi = e.replySourceWord(i, 0);
        tuple.dstLo = e.replySourceWord(i, 1);
        tuple.protocol = e.protocol(i);
        tuple.dstPort = e.hasPorts(i) ? e.replySourcePort(i) : 0;
        tuple.srcPort = e.hasPorts(i) ? e.originalSourcePort(i) : 0;
    }
}
