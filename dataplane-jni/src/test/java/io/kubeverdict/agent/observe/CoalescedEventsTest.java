// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import org.junit.jupiter.api.Test;

class CoalescedEventsTest {
    private static final Object GENERATION = new Object();

    private static VerdictFeed.Seen seen(int port, Verdict verdict, Object generation) {
        return new VerdictFeed.Seen(
                4, 0, 0x0a000002L, 0, 0x0a000001L, 6, port, verdict, false, false, false, generation);
    }

    private static VerdictEvent event(String node) {
        return VerdictEvent.newBuilder().setNode(node).build();
    }

    @Test
    void verdictsOfAWaitingKeyAreCountedIntoItsEvent() {
        CoalescedEvents events = new CoalescedEvents(8);
        VerdictFeed.Seen deny80 = seen(80, Verdict.VERDICT_DENY, GENERATION);
        assertThat(events.join(deny80)).as("nothing waits yet").isFalse();
        assertThat(events.add(deny80, event("first"))).isTrue();
        assertThat(events.join(seen(80, Verdict.VERDICT_DENY, GENERATION))).isTrue();
        assertThat(events.join(deny80)).isTrue();

        assertThat(events.drain(10)).singleElement().satisfies(e -> {
            assertThat(e.getNode()).isEqualTo("first");
            assertThat(e.getCount()).isEqualTo(3);
        });
        assertThat(events.join(deny80))
                .as("sent: a later verdict starts a new event")
                .isFalse();
        assertThat(events.add(deny80, event("second"))).isTrue();
        assertThat(events.drain(10))
                .singleElement()
                .satisfies(e ->
                        assertThat(e.getCount()).as("one verdict: no count").isZero());
    }

    @Test
    void anotherVerdictPortOrGenerationIsAnotherEvent() {
        CoalescedEvents events = new CoalescedEvents(8);
        events.add(seen(80, Verdict.VERDICT_DENY, GENERATION), event("deny"));
        assertThat(events.join(seen(80, Verdict.VERDICT_ALLOW, GENERATION))).isFalse();
        assertThat(events.join(seen(81, Verdict.VERDICT_DENY, GENERATION))).isFalse();
        assertThat(events.join(seen(80, Verdict.VERDICT_DENY, new Object()))).isFalse();
    }

    @Test
    void aFullQueueKeepsNothingOfTheRefusedEventAndClearForgetsAll() {
        CoalescedEvents events = new CoalescedEvents(1);
        VerdictFeed.Seen a = seen(80, Verdict.VERDICT_DENY, GENERATION);
        VerdictFeed.Seen b = seen(81, Verdict.VERDICT_DENY, GENERATION);
        assertThat(events.add(a, event("a"))).isTrue();
        assertThat(events.add(b, event("b"))).isFalse();
        assertThat(events.join(b)).as("a refused event is not waiting").isFalse();
        events.clear();
        assertThat(events.join(a)).isFalse();
        assertThat(events.isEmpty()).isTrue();
    }
}
