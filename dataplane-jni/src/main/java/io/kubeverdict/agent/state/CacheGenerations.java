// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.agent.nft.CacheMarks;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The verdict cache's side of a generation change, on the sync thread: each generation gets a tag
 * different from the one before ({@link #nextMark}), its cacheable accepts carry it, and the kernel
 * lets only packets with the current tag add keys. Before the swap, once the kernel takes no more
 * keys (its tags removed) and before it empties the cache and is told the new tag, {@link #arm}
 * waits until every verdict sent so far has reached the kernel (each verdict loop answered what it
 * took before; a verdict is applied, and the accepted packet's key added, within the sendmsg that
 * carries it): such a key is then already in the sets that the next transaction empties, and no
 * packet with an older tag is left to come later. So even a tag that comes back after {@link CacheMarks#TAGS} generations finds no packet
 * of its earlier use. If the wait times out (a verdict thread stuck), the generation is enforced
 * with no tag at all: nothing is cached until a later generation's wait succeeds.
 */
public final class CacheGenerations {
    /** Whether every verdict loop has answered the batches it took before the call (within the timeout). */
    @FunctionalInterface
    public interface VerdictsAnswered {
        boolean await(long timeoutMillis) throws InterruptedException;
    }

    /** No verdict cache: generations carry no tag and the kernel's cache is never touched. */
    public static final CacheGenerations OFF = new CacheGenerations(false, timeout -> true, 0);

    private final boolean enabled;
    private final VerdictsAnswered answered;
    private final long timeoutMillis;
    private int tag; // the last tag handed out (sync thread only)
    private final AtomicLong flushes = new AtomicLong();
    private final AtomicLong unarmed = new AtomicLong();

    public CacheGenerations(boolean enabled, VerdictsAnswered answered, long timeoutMillis) {
        this.enabled = enabled;
        this.answered = answered;
        this.timeoutMillis = timeoutMillis;
    }

    public boolean enabled() {
        return enabled;
    }

    /** The tag mark of the next generation: never the previous one's; 0 when the cache is off. */
    public int nextMark() {
        if (!enabled) {
            return 0;
        }
        tag = CacheMarks.next(tag);
        return CacheMarks.mark(tag);
    }

    /**
     * Called before the generation tagged {@code mark} is swapped in, once the kernel takes no more
     * keys: the tag the kernel may accept keys from, i.e. {@code mark} once every earlier verdict
     * has reached the kernel, else 0.
     */
    public int arm(int mark) throws InterruptedException {
        flushes.incrementAndGet();
        if (mark != 0 && answered.await(timeoutMillis)) {
            return mark;
        }
        unarmed.incrementAndGet();
        return 0;
    }

    /** A generation whose kernel change failed: its cache could not be emptied with it. */
    void failed() {
        unarmed.incrementAndGet();
    }

    /** Generations that emptied the cache (every generation applied with the cache on). */
    public long flushes() {
        return flushes.get();
    }

    /** Generations during which nothing could be cached (a wait timed out, or the kernel change failed). */
    public long unarmed() {
        return unarmed.get();
    }
}
