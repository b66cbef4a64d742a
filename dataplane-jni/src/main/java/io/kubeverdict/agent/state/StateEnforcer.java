// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.policy.IndexUpdate;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.time.Clock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a complete snapshot the enforced one: index it, swap the index the verdict loop reads, then
 * change the kernel's queue sets. The order matters: a newly selected pod's first packets reach the
 * queue only after the index that knows it is in place, and an unselected pod leaves the sets only
 * after the index stopped isolating it, so no packet is judged by a generation that doesn't know it.
 * Then the listener hears of it (established connections are judged again from there). With the
 * verdict cache on, every generation first empties the kernel's cache, before its index is swapped
 * in, and gives the kernel its new tag ({@link CacheGenerations}).
 *
 * <p>The index is made from the enforced one by {@link SnapshotIndex#update}, which redoes only
 * what the change touches (a few set members, an endpoint: a copy of the pages they fall in) and
 * compiles from scratch the first snapshot and a big node's new stream (whose messages are all
 * new), and whenever following the change key by key would not be sound (see {@link IndexUpdate}).
 * Either way the new index is built aside and swapped whole: the verdict loop reads the old
 * generation or the new one, never a mixture.
 */
public final class StateEnforcer implements Enforcer {
    private static final Logger log = LoggerFactory.getLogger(StateEnforcer.class);

    private final StateHolder holder;
    private final SelectedSetsProgrammer kernel;
    private final Clock clock;
    private final GenerationListener listener;
    private final Function<NodeSnapshot, PodGuard> guards;
    private final CacheGenerations cache;
    private SelectedAddresses programmed;
    private volatile IndexUpdate.Result lastIndexUpdate;

    public StateEnforcer(StateHolder holder, SelectedSetsProgrammer kernel, Clock clock) {
        this(holder, kernel, clock, GenerationListener.NONE);
    }

    public StateEnforcer(StateHolder holder, SelectedSetsProgrammer kernel, Clock clock, GenerationListener listener) {
        this(holder, kernel, clock, listener, snapshot -> PodGuard.NONE);
    }

    /** @param guards the pod address guard of each generation (the node's pod ranges, its own addresses) */
    public StateEnforcer(
            StateHolder holder,
            SelectedSetsProgrammer kernel,
            Clock clock,
            GenerationListener listener,
            Function<NodeSnapshot, PodGuard> guards) {
        this(holder, kernel, clock, listener, guards, CacheGenerations.OFF);
    }

    /** @param cache the verdict cache's tags (each generation empties the kernel's cache in its transaction) */
    public StateEnforcer(
            StateHolder holder,
            SelectedSetsProgrammer kernel,
            Clock clock,
            GenerationListener listener,
            Function<NodeSnapshot, PodGuard> guards,
            CacheGenerations cache) {
        this.cache = cache;
        this.holder = holder;
        this.kernel = kernel;
        this.clock = clock;
        this.listener = listener;
        this.guards = guards;
    }

    @Override
    public void enforce(NodeSnapshot snapshot, long sequence) throws Exception {
        EnforcedState before = holder.current();
        long start = System.nanoTime();
        IndexUpdate.Result update = before == null
                ? new IndexUpdate.Result(SnapshotIndex.compile(snapshot), false, "first snapshot")
                : before.index().update(before.snapshot(), snapshot);
        long micros = (System.nanoTime() - start) / 1000;
        if (update.defect() != null) {
            log.warn(
                    "sequence {}: updating the index failed, compiled it instead (a bug; please report it)",
                    sequence,
                    update.defect());
        }
        if (update.incremental()) {
            log.debug("sequence {}: index updated in {} µs ({})", sequence, micros, update.summary());
        } else {
            log.info(
                    "sequence {}: index compiled in {} ms ({}): {} endpoints, {} ip sets, {} problems",
                    sequence,
                    micros / 1000,
                    update.summary(),
                    snapshot.getEndpointsCount(),
                    snapshot.getIpSetsCount(),
                    update.index().problemCount());
        }
        lastIndexUpdate = update;
        PodGuard guard = guards.apply(snapshot);
        SelectedAddresses selected = SelectedAddresses.of(snapshot, guard);
        EnforcedState now = new EnforcedState(snapshot, update.index(), selected, sequence, clock.millis(), guard);
        int cacheMark = cache.nextMark();
        if (cache.enabled() && programmed != null) {
            emptyCacheFor(cacheMark);
        }
        holder.swap(now, cacheMark);
        if (cache.enabled() && programmed == null) {
            kernel.program(selected, cacheMark); // the table's first write: its cache is empty, tagged cacheMark
            programmed = selected;
        } else if (!selected.equals(programmed)) {
            kernel.program(selected);
            programmed = selected;
        }
        listener.enforced(before, now);
    }

    /**
     * Before the swap: no key the current state cached may answer once the next state decides, and
     * no packet the current state judged may add one afterwards. Close (no more adds), wait until
     * every verdict sent before reached the kernel (its key, if any, is in the set by then), then
     * empty the cache and tag it for the next generation, whose packets exist only after the swap.
     */
    private void emptyCacheFor(int cacheMark) throws Exception {
        try {
            kernel.closeCache();
            kernel.resetCache(cache.arm(cacheMark));
        } catch (Exception e) {
            cache.failed();
            throw e;
        }
    }

    /** How the last generation's index was made (incremental or compiled, and what changed); null before any. */
    public IndexUpdate.Result lastIndexUpdate() {
        return lastIndexUpdate;
    }
}
