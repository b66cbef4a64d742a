// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.VerdictEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecentVerdictsTest {
    private static VerdictEvent event(String node) {
        return VerdictEvent.newBuilder().setNode(node).build();
    }

    private static List<String> nodes(RecentVerdicts.Replay r) {
        return r.events().stream().map(VerdictEvent::getNode).toList();
    }

    @Test
    void aFullRingForgetsTheOldestAndReplaysOldestFirst() {
        RecentVerdicts recent = new RecentVerdicts(3);
        for (int i = 1; i <= 5; i++) {
            assertThat(recent.add(event("e" + i), i)).isEqualTo(i);
        }
        assertThat(recent.size()).isEqualTo(3);
        RecentVerdicts.Replay all = recent.matching(e -> true, 0, null);
        assertThat(nodes(all)).containsExactly("e3", "e4", "e5");
        assertThat(all.upTo()).isEqualTo(5);
    }

    @Test
    void lastCountsOnlyMatchingEventsAndSinceStopsAtOlderOnes() {
        RecentVerdicts recent = new RecentVerdicts(10);
        for (int i = 1; i <= 8; i++) {
            recent.add(event(i % 2 == 0 ? "even" + i : "odd" + i), i * 100L);
        }
        assertThat(nodes(recent.matching(e -> e.getNode().startsWith("even"), 2, null)))
                .containsExactly("even6", "even8");
        assertThat(nodes(recent.matching(e -> true, 0, 600L))).containsExactly("even6", "odd7", "even8");
        assertThat(nodes(recent.matching(e -> true, 1, 100L))).containsExactly("even8");
        assertThat(nodes(recent.matching(e -> true, 0, 900L))).isEmpty();
    }
}
