// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The enforcer the sync client starts with while the kernel side (shim, queues, verdict threads,
 * tables) is still being set up: the first snapshot's fetch and assembly run beside that set-up,
 * and its enforcement waits here until the real enforcer is handed over. If the set-up fails
 * instead, the wait ends with that failure and nothing is enforced.
 */
final class PendingEnforcer implements Enforcer {
    private final CompletableFuture<Enforcer> ready = new CompletableFuture<>();

    /** From now on snapshots go to {@code enforcer}. */
    void ready(Enforcer enforcer) {
        ready.complete(enforcer);
    }

    /** The set-up failed: a snapshot waiting (or arriving later) fails to apply. */
    void failed(Throwable cause) {
        ready.completeExceptionally(cause);
    }

    @Override
    public void enforce(NodeSnapshot snapshot, long sequence) throws Exception {
        Enforcer enforcer;
        try {
            enforcer = ready.get(); // interruptible: closing the sync client interrupts its thread
        } catch (ExecutionException e) {
            throw new IllegalStateException("the agent's kernel set-up failed", e.getCause());
        }
        enforcer.enforce(snapshot, sequence);
    }
}
