package io.kubeverdict.agent.state;

import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.time.Clock;

/**
 * Makes a complete snapshot the enforced one: compile, swap the index the verdict loop reads, then
 * change the kernel's queue sets. The order matters: a newly selected pod's first packets reach the
 * queue only after the index that knows it is in place, and an unselected pod leaves the sets only
 * after the index stopped isolating it, so no packet is judged by a generation that doesn't know it.
 * Then the listener hears of it (established connections are judged again from there).
 */
public final class StateEnforcer implements Enforcer {
    private final StateHolder holder;
    private final SelectedSetsProgrammer kernel;
    private final Clock clock;
    private final GenerationListener listener;
    private SelectedAddresses programmed;

    public StateEnforcer(StateHolder holder, SelectedSetsProgrammer kernel, Clock clock) {
        this(holder, kernel, clock, GenerationListener.NONE);
    }

    public StateEnforcer(StateHolder holder, SelectedSetsProgrammer kernel, Clock clock, GenerationListener listener) {
        this.holder = holder;
        this.kernel = kernel;
        this.clock = clock;
        this.listener = listener;
    }

    @Override
    public void enforce(NodeSnapshot snapshot, long sequence) throws Exception {
        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        SelectedAddresses selected = SelectedAddresses.of(snapshot);
        EnforcedState before = holder.current();
        EnforcedState now = new EnforcedState(snapshot, index, selected, sequence, clock.millis());
        holder.swap(now);
        if (!selected.equals(programmed)) {
            kernel.program(selected);
            programmed = selected;
        }
        listener.enforced(before, now);
    }
}
