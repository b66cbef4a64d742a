// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class PendingEnforcerTest {
    private static final NodeSnapshot SNAPSHOT =
            NodeSnapshot.newBuilder().setNode("n1").build();

    @Test
    void aSnapshotWaitsForTheEnforcerThenGoesToIt() throws Exception {
        PendingEnforcer pending = new PendingEnforcer();
        List<Long> enforced = new ArrayList<>();
        CompletableFuture<Void> applied = CompletableFuture.runAsync(() -> {
            try {
                pending.enforce(SNAPSHOT, 7);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThatThrownBy(() -> applied.get(200, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        assertThat(enforced).isEmpty();

        pending.ready((snapshot, sequence) -> enforced.add(sequence));
        applied.get(10, TimeUnit.SECONDS);
        pending.enforce(SNAPSHOT, 8);
        assertThat(enforced).containsExactly(7L, 8L);
    }

    @Test
    void aFailedSetUpFailsTheSnapshotInsteadOfApplyingIt() {
        PendingEnforcer pending = new PendingEnforcer();
        pending.failed(new IllegalStateException("no queue"));
        pending.ready((snapshot, sequence) -> {
            throw new AssertionError("must not run");
        });
        assertThatThrownBy(() -> pending.enforce(SNAPSHOT, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("no queue");
    }

    @Test
    void failingAfterReadyChangesNothing() throws Exception {
        PendingEnforcer pending = new PendingEnforcer();
        List<Long> enforced = new ArrayList<>();
        pending.ready((snapshot, sequence) -> enforced.add(sequence));
        pending.failed(new IllegalStateException("closing"));
        pending.enforce(SNAPSHOT, 3);
        assertThat(enforced).containsExactly(3L);
    }

    @Test
    void theWaitEndsWhenItsThreadIsInterrupted() throws Exception {
        PendingEnforcer pending = new PendingEnforcer();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread sync = new Thread(() -> {
            try {
                pending.enforce(SNAPSHOT, 1);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        sync.start();
        sync.interrupt();
        assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    }
}
