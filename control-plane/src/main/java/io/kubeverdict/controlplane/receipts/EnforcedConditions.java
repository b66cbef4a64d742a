// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which admin-tier policies' {@code Enforced} condition to write, and when: pure (times are
 * arguments), for {@link StatusConditionWriter}. A condition is written only when it differs from
 * the one last written; a change of status, reason or observed generation goes out at the next
 * sweep, while a change of the message alone (N of M moving as nodes apply) waits until
 * {@link #MESSAGE_INTERVAL_NANOS} after the last write, so node acks never become one write each.
 * A sweep writes at most its budget, status changes first; a failed write waits 1 s, doubling to
 * 60 s.
 */
public final class EnforcedConditions {
    public static final String TYPE = "Enforced";
    static final long MESSAGE_INTERVAL_NANOS = 30_000_000_000L;
    private static final long FIRST_BACKOFF_NANOS = 1_000_000_000L;
    private static final long MAX_BACKOFF_NANOS = 60_000_000_000L;

    /** What the condition says ({@code status} True, False or Unknown); lastTransitionTime is the writer's. */
    public record Condition(String status, String reason, String message, long observedGeneration) {
        boolean sameState(Condition o) {
            return status.equals(o.status) && reason.equals(o.reason) && observedGeneration == o.observedGeneration;
        }
    }

    /** A condition to write now. */
    public record Due(PolicyRef ref, Condition condition) {}

    private record Written(Condition condition, long atNanos) {}

    private record Failed(int failures, long retryAtNanos) {}

    private final Map<PolicyRef, Written> written = new HashMap<>();
    private final Map<PolicyRef, Failed> failed = new HashMap<>();

    /** The condition a receipt calls for when every node reports to this replica. */
    public static Condition of(Receipt r) {
        return of(r, 0);
    }

    /**
     * The condition a receipt calls for, {@code elsewhere} of its lagging nodes reporting to
     * another replica (or to none): this replica cannot tell whether those run the generation, so
     * when only they lag the status is Unknown, never True.
     */
    public static Condition of(Receipt r, int elsewhere) {
        if (!r.calculated()) {
            return new Condition(
                    "False",
                    "NotCalculated",
                    "the control plane has not published the snapshots of this generation yet",
                    r.generation());
        }
        String counts = "enforced on " + r.enforcedNodes() + " of " + r.nodes() + " nodes";
        if (r.enforced()) {
            return new Condition("True", "Enforced", counts, r.generation());
        }
        if (elsewhere > 0 && elsewhere >= r.laggingNodes()) {
            return new Condition(
                    "Unknown",
                    "NodesReportElsewhere",
                    counts + "; " + elsewhere + " not reporting to the writing control-plane replica",
                    r.generation());
        }
        return new Condition("False", "NodesLagging", counts, r.generation());
    }

    /** Each receipt's count of lagging nodes that report elsewhere (0 when all report here). */
    public interface Elsewhere {
        int of(Receipt r);
    }

    /**
     * The admin-tier policies (cluster-scoped kinds) whose condition is due, at most {@code budget},
     * changes of state before changes of message. Policies not among the receipts are forgotten.
     */
    public List<Due> due(Collection<Receipt> receipts, long nowNanos, int budget) {
        return due(receipts, r -> 0, nowNanos, budget);
    }

    /** {@link #due(Collection, long, int)} with lagging nodes reporting elsewhere counted by {@code elsewhere}. */
    public List<Due> due(Collection<Receipt> receipts, Elsewhere elsewhere, long nowNanos, int budget) {
        List<Due> states = new ArrayList<>();
        List<Due> messages = new ArrayList<>();
        Set<PolicyRef> present = new HashSet<>();
        for (Receipt r : receipts) {
            if (!r.ref().namespace().isEmpty()) {
                continue; // NetworkPolicies have no status
            }
            present.add(r.ref());
            Condition want = of(r, r.enforced() || !r.calculated() ? 0 : elsewhere.of(r));
            Written last = written.get(r.ref());
            if (last != null && last.condition.equals(want)) {
                continue;
            }
            Failed f = failed.get(r.ref());
            if (f != null && nowNanos - f.retryAtNanos < 0) {
                continue;
            }
            if (last == null || !last.condition.sameState(want)) {
                states.add(new Due(r.ref(), want));
            } else if (nowNanos - last.atNanos >= MESSAGE_INTERVAL_NANOS) {
                messages.add(new Due(r.ref(), want));
            }
        }
        written.keySet().retainAll(present);
        failed.keySet().retainAll(present);
        Comparator<Due> byName = Comparator.comparing(Due::ref);
        states.sort(byName);
        messages.sort(byName);
        List<Due> out = new ArrayList<>(Math.min(budget, states.size() + messages.size()));
        for (Due d : states) {
            if (out.size() < budget) {
                out.add(d);
            }
        }
        for (Due d : messages) {
            if (out.size() < budget) {
                out.add(d);
            }
        }
        return out;
    }

    /** Forgets what was written (this replica became the writer again: another may have written meanwhile). */
    public void forgetWritten() {
        written.clear();
        failed.clear();
    }

    public void written(PolicyRef ref, Condition condition, long nowNanos) {
        written.put(ref, new Written(condition, nowNanos));
        failed.remove(ref);
    }

    /** The write failed (conflict, throttled, API down): retried after a backoff. */
    public void failed(PolicyRef ref, long nowNanos) {
        Failed before = failed.get(ref);
        int n = before == null ? 1 : before.failures + 1;
        long backoff = Math.min(MAX_BACKOFF_NANOS, FIRST_BACKOFF_NANOS << Math.min(n - 1, 6));
        failed.put(ref, new Failed(n, nowNanos + backoff));
    }
}
