// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Protocol;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Clock;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

/**
 * The DNS path per query (locate, parse, record) and response (locate, parse, match the query, refresh the learned addresses, meter the hold
 * time) and the verdict on a domain-name rule (the judge asking the learned view) allocate
 * nothing once the names and addresses are known. Companion of HotPathAllocationTest.
 */
class DnsHotPathAllocationTest {

    @Test
    void refreshingAnswersAndJudgingLearnedAddressesAllocatesNothing() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        LearnedAddressBook book = new LearnedAddressBook();
        StateHolder state = new StateHolder(0, book);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.domainNames(), 1);
        DnsLearner learner = new DnsLearner(30, 3600, DnsResolvers.of(java.util.List.of("10.96.0.10")));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        LongConsumer hold = DnsMetrics.register(registry, learner, book);

        DnsMessages m = DnsMessages.response("www.svc.test", 1).cname("www.svc.test", 120, "pool.svc.test");
        for (int i = 0; i < 48; i++) {
            m.a("pool.svc.test", 300, "10.97.0." + (i + 1));
        }
        byte[] query = DnsPackets.udpQuery("10.0.0.1", "10.96.0.10", DnsStubClient.query(0x1234, "www.svc.test", 1));
        byte[] udp = DnsPackets.udp("10.96.0.10", "10.0.0.1", m.bytes());
        byte[] tcp = DnsPackets.tcp(
                "10.96.0.10",
                "10.0.0.1",
                DnsMessages.response("api.test", 28)
                        .aaaa("api.test", 60, "2001:db8::10")
                        .bytes());
        ByteBuffer slots = ByteBuffer.allocateDirect(3 * 9232).order(ByteOrder.nativeOrder());
        slots.put(16, udp);
        slots.put(9232 + 16, tcp);
        slots.put(2 * 9232 + 16, query);
        PacketTuple learned = new PacketTuple()
                .set(IpAddress.parse("10.0.0.1"), IpAddress.parse("10.97.0.7"), Protocol.TCP_VALUE, 443);
        PacketTuple denied = new PacketTuple()
                .set(IpAddress.parse("10.0.0.1"), IpAddress.parse("10.98.0.7"), Protocol.TCP_VALUE, 443);
        int[] sink = new int[2];
        Runnable work = () -> {
            for (int i = 0; i < 20_000; i++) {
                LearnedAddressBook.View view = state.learned();
                sink[0] += learner.handle(view, slots, 2 * 9232 + 16, query.length);
                sink[0] += learner.handle(view, slots, 16, udp.length);
                sink[0] += learner.handle(view, slots, 9232 + 16, tcp.length);
                hold.accept(2_000 + (i & 1023));
                sink[1] += state.decide(learned) & 1;
                sink[1] += state.decide(denied) & 1;
            }
        };
        work.run(); // warm up: JIT, first learning (allocates the entries), meters
        long before = threads.getCurrentThreadAllocatedBytes();
        work.run();
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated)
                .as("bytes allocated for 20k queries, 40k responses and 40k verdicts")
                .isLessThan(16 * 1024);
        assertThat(learner.count(DnsLearner.REFRESHED)).isGreaterThan(35_000);
        assertThat(learner.count(DnsLearner.TCP_NOT_LEARNED)).isEqualTo(40_000);
        assertThat(Decision.allowed(state.decide(learned))).isTrue();
        assertThat(Decision.allowed(state.decide(denied))).isFalse();
        registry.close();
    }
}
