// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An agent that reconnects with the digest of the state it enforces (after the control plane's
 * restart): one resumed InSync when that is the node's current snapshot, then deltas as usual; the
 * full snapshot otherwise. Either way it ends in the state a full resync gives.
 */
class SyncResumeTest {
    private static final NodeSnapshot A = snapshot(
            "n1",
            List.of(ipSet("s1", "10.0.0.2", "10.0.0.1")),
            List.of(allowIngressFrom("x/allow-a", "s1")),
            List.of(podEndpoint("x", "b", "10.0.0.2"), podEndpoint("x", "a", "10.0.0.1", "x/allow-a")));
    private static final NodeSnapshot B = snapshot(
            "n1",
            List.of(ipSet("s1", "10.0.0.1", "10.0.0.3")),
            List.of(allowIngressFrom("x/allow-a", "s1")),
            List.of(podEndpoint("x", "a", "10.0.0.1", "x/allow-a")));

    private SyncServerFixture f;

    @AfterEach
    void tearDown() throws Exception {
        if (f != null) {
            f.close();
        }
    }

    private double resumed() {
        return f.metrics
                .registry()
                .get("kubeverdict_sync_streams_resumed_total")
                .counter()
                .count();
    }

    @Test
    void anAgentHoldingTheCurrentStateGetsOneResumedInSyncThenDeltasAndEndsAsAFullResync() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        // What an agent enforces is the snapshot in its own order (the digest does not count order).
        NodeSnapshot enforced = AgentView.canonical(A);
        try (TestAgent agent = TestAgent.resume(f.channel, "n1", enforced);
                TestAgent full = f.agent("n1")) {
            ToAgent first = agent.next();
            assertThat(first.hasInSync()).isTrue();
            assertThat(first.getInSync().getResumed()).isTrue();
            assertThat(first.getInSync().getChangeBoundaries()).isTrue();
            assertThat(first.getSequence()).isEqualTo(1);
            assertThat(agent.state("n1")).isEqualTo(AgentView.canonical(A));
            assertThat(resumed()).isEqualTo(1);

            f.hub.publish(B, 77L);
            agent.readUntil(B);
            assertThat(agent.view.deltas)
                    .isNotEmpty()
                    .allSatisfy(m -> assertThat(m.getEventTimeUnixNanos()).isEqualTo(77L));
            full.readUntil(B);
            assertThat(agent.state("n1")).isEqualTo(full.state("n1"));
        }
    }

    @Test
    void aDigestOfAnotherStateGetsTheFullSnapshot() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(B, 0);
        f.hub.markReady();
        try (TestAgent agent = TestAgent.resume(f.channel, "n1", A)) {
            agent.readUntilInSync();
            ToAgent first = agent.view.received.get(0);
            assertThat(first.hasInSync()).as("the snapshot comes first").isFalse();
            ToAgent inSync = agent.view.received.get(agent.view.received.size() - 1);
            assertThat(inSync.getInSync().getResumed()).isFalse();
            // Nothing of A survives: the view started from nothing.
            assertThat(agent.state("n1")).isEqualTo(AgentView.canonical(B));
            assertThat(resumed()).isZero();
        }
    }
}
