// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.agent.dns.LearnedAddressBook;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.policy.PacketTuple;

/**
 * The agent's current policy generation behind one volatile reference: the sync thread swaps
 * whole generations, the verdict loop reads one per packet without locking. Until the first
 * generation arrives, queued packets get the configured default.
 *
 * <p>A generation carries the view of the {@link LearnedAddressBook} its index numbers (addresses
 * pods learned from DNS answers for their domain-name rules), swapped with it, so decide() never
 * asks one generation's index about another's numbers.
 */
public final class StateHolder {
    /**
     * One enforced state with the learned-address view its index numbers, and the verdict cache tag
     * its cacheable accepts carry ({@code io.kubeverdict.agent.nft.CacheMarks}; 0: none are tagged).
     */
    public record Generation(EnforcedState state, LearnedAddressBook.View learned, int cacheMark) {}

    private final int defaultDecision;
    private final LearnedAddressBook book;
    private volatile Generation current;

    /** @param defaultDecision the Decision code for packets queued before any state is applied */
    public StateHolder(int defaultDecision) {
        this(defaultDecision, new LearnedAddressBook());
    }

    public StateHolder(int defaultDecision, LearnedAddressBook book) {
        this.defaultDecision = defaultDecision;
        this.book = book;
    }

    /** The applied generation, or null before the first InSync. */
    public EnforcedState current() {
        Generation g = current;
        return g == null ? null : g.state();
    }

    /** The learned addresses as the applied generation numbers them, or null before the first InSync. */
    public LearnedAddressBook.View learned() {
        Generation g = current;
        return g == null ? null : g.learned();
    }

    public LearnedAddressBook book() {
        return book;
    }

    public void swap(EnforcedState next) {
        swap(next, 0);
    }

    /** Makes {@code next} the generation the verdict loops decide with, its cacheable accepts tagged {@code cacheMark}. */
    public void swap(EnforcedState next, int cacheMark) {
        current = new Generation(next, book.view(next.index()), cacheMark);
    }

    /** The applied generation (state and its learned view), or null before the first InSync. */
    public Generation generation() {
        return current;
    }

    /**
     * The learned view that belongs to {@code state}: the applied generation's when it is that
     * state (the listener is told right after the swap), else none (a superseded state's numbers
     * are not the book's any more).
     */
    public LearnedAddresses learnedOf(EnforcedState state) {
        Generation g = current;
        return g != null && g.state() == state ? g.learned() : LearnedAddresses.NONE;
    }

    /** The verdict loop's judge: one volatile read, then the index's allocation-free decide. */
    public int decide(PacketTuple packet) {
        return decide(current, packet);
    }

    /** Decides with a generation read before (so the caller knows which one decided). */
    public int decide(Generation g, PacketTuple packet) {
        return g == null ? defaultDecision : g.state().index().decide(packet, g.learned());
    }
}
