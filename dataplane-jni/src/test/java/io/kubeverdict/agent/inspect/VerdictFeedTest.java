// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Verdict;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class VerdictFeedTest {
    private static final IpAddress CLIENT = IpAddress.parse("10.0.0.2");

    @Test
    void aVerdictItsSinkDoesNotWantIsNotExplained() throws Exception {
        // each matching verdict reads the state once to be keyed, each explanation once more
        AtomicInteger stateReads = new AtomicInteger();
        StateHolder state = new StateHolder(0);
        VerdictFeed feed = new VerdictFeed(256, () -> {
            stateReads.incrementAndGet();
            return state.generation();
        });
        List<Explanation> delivered = new CopyOnWriteArrayList<>();
        AtomicInteger asked = new AtomicInteger();
        try (AutoCloseable subscription = feed.subscribe(Verdict.VERDICT_UNSPECIFIED, new VerdictFeed.Sink() {
            @Override
            public boolean wants(VerdictFeed.Seen verdict) {
                return asked.incrementAndGet() % 2 == 0; // every second one, as a sampler might
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void onNext(Explanation verdict) {
                delivered.add(verdict);
            }
        })) {
            for (int port = 1; port <= 10; port++) {
                feed.publish(new PacketTuple().set(CLIENT, IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, port), 1);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (delivered.size() < 5 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            feed.close();
        }
        // The feed answers in order, so all ten were asked about once the fifth wanted one arrived.
        assertThat(delivered).extracting(e -> e.getTuple().getDstPort()).containsExactly(2, 4, 6, 8, 10);
        assertThat(asked).hasValue(10);
        assertThat(stateReads).as("ten keyed, five explained").hasValue(15);
    }
}
