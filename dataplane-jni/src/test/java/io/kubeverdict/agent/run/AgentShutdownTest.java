// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The order of the agent's clean stop, and what it leaves when the sync thread does not stop. */
class AgentShutdownTest {
    private final List<String> events = new ArrayList<>();

    private AgentShutdown shutdown(boolean removeTable, boolean syncStops) {
        AgentShutdown shutdown = new AgentShutdown("kube_verdict", removeTable, new PendingEnforcer());
        shutdown.sync(() -> {
            events.add("sync stopped");
            return syncStops;
        });
        shutdown.nftables(() -> events.add("nftables closed"));
        shutdown.policyTable(() -> events.add("table removed"));
        shutdown.dnsTable(() -> events.add("dns table removed"));
        shutdown.opened().add(() -> events.add("first opened closed"));
        shutdown.opened().add(() -> events.add("second opened closed"));
        return shutdown;
    }

    @Test
    void stopsSyncThenTablesThenWhatWasOpenedInReverseThenTheNftablesContext() {
        shutdown(true, true).run();
        assertThat(events)
                .containsExactly(
                        "sync stopped",
                        "dns table removed",
                        "table removed",
                        "second opened closed",
                        "first opened closed",
                        "nftables closed");
    }

    @Test
    void keepsTheTableUnlessConfiguredToRemoveIt() {
        shutdown(false, true).run();
        assertThat(events).doesNotContain("table removed").contains("dns table removed");
    }

    @Test
    void leavesBothTablesAloneWhileTheSyncThreadIsStillApplyingAChange() {
        // The sync thread outlasted its join, inside an nftables transaction (audit L5): a removal
        // now would be undone or half-done by what that thread writes next.
        shutdown(true, false).run();
        assertThat(events)
                .containsExactly("sync stopped", "second opened closed", "first opened closed", "nftables closed");
    }

    @Test
    void aSecondRunFindsNothingLeftToStop() {
        AgentShutdown shutdown = shutdown(true, true);
        shutdown.run();
        events.clear();
        shutdown.run();
        assertThat(events).isEmpty();
    }
}
