package io.kubeverdict.agent.state;

import io.kubeverdict.policy.PacketTuple;

/**
 * The agent's current policy generation behind one volatile reference: the sync thread swaps
 * whole generations, the verdict loop reads one per packet without locking. Until the first
 * generation arrives, queued packets get the configured default.
 */
public final class StateHolder {
    private final int defaultDecision;
    private volatile EnforcedState current;

    /** @param defaultDecision the Decision code for packets queued before any state is applied */
    public StateHolder(int defaultDecision) {
        this.defaultDecision = defaultDecision;
    }

    /** The applied generation, or null before the first InSync. */
    public EnforcedState current() {
        return current;
    }

    public void swap(EnforcedState next) {
        current = next;
    }

    /** The verdict loop's judge: one volatile read, then the index's allocation-free decide. */
    public int decide(PacketTuple packet) {
        return decide(current, packet);
    }

    /** Decides with a generation read before (so the caller knows which one decided). */
    public int decide(EnforcedState state, PacketTuple packet) {
        return state == null ? defaultDecision : state.index().decide(packet);
    }
}
