// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.SnapshotIndex;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The DNS path's CPU cost per response: {@code parse} (the message alone) and {@code learn} (the
 * whole packet as the DNS thread handles it: locate UDP/53, parse, match the pod's patterns,
 * refresh the learned addresses, which are known after the first round), next to a baseline that
 * reads every byte of the same message once (a checksum), so the figures read as ratios on
 * whatever machine runs them. Shapes: one A answer; a CNAME chain of two to four addresses; 50
 * answers (2 CNAMEs, 48 A) as a large pool answers.
 *
 * <p>Run: {@code ./mvnw -q -B -pl dataplane-jni -am -Pbenchmarks test-compile exec:exec
 * -Djmh.args="DnsParseBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc"}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DnsParseBenchmark {
    @Param({"one-a", "cname-chain", "fifty-answers"})
    public String shape;

    private final DnsResponseParser parser = new DnsResponseParser();
    private final DnsLearner learner = new DnsLearner(30, 3600);
    private LearnedAddressBook.View view;
    private ByteBuffer message;
    private ByteBuffer packet;
    private int messageLength;
    private int packetLength;

    @Setup
    public void setUp() {
        byte[] m = message(shape).bytes();
        byte[] p = DnsPackets.udp("10.96.0.10", "10.0.0.1", m);
        message = ByteBuffer.allocateDirect(m.length).put(0, m);
        packet = ByteBuffer.allocateDirect(p.length).put(0, p);
        messageLength = m.length;
        packetLength = p.length;
        view = new LearnedAddressBook().view(SnapshotIndex.compile(SnapshotFixtures.domainNames()));
        if (learner.handle(view, packet, 0, packetLength) != DnsLearner.LEARNED) {
            throw new IllegalStateException(shape + ": the response does not teach t/client anything");
        }
    }

    static DnsMessages message(String shape) {
        switch (shape) {
            case "one-a":
                return DnsMessages.response("api.test", 1).a("api.test", 60, "192.0.2.10");
            case "cname-chain":
                return DnsMessages.response("www.svc.test", 1)
                        .cname("www.svc.test", 300, "lb.svc.test")
                        .cname("lb.svc.test", 60, "edge.svc.test")
                        .a("edge.svc.test", 30, "198.51.100.7")
                        .a("edge.svc.test", 30, "198.51.100.8")
                        .aaaa("edge.svc.test", 30, "2001:db8::7");
            case "fifty-answers":
                DnsMessages m = DnsMessages.response("www.svc.test", 1)
                        .cname("www.svc.test", 120, "pool.svc.test")
                        .cname("pool.svc.test", 90, "pool-2.svc.test");
                for (int i = 0; i < 48; i++) {
                    m.a("pool-2.svc.test", 100 + i, "10.97.0." + (i + 1));
                }
                return m;
            default:
                throw new IllegalArgumentException(shape);
        }
    }

    @Benchmark
    public int baselineReadEveryByte() {
        int sum = 0;
        for (int i = 0; i < messageLength; i++) {
            sum = sum * 31 + message.get(i);
        }
        return sum;
    }

    @Benchmark
    public int parse() {
        return parser.parse(message, 0, messageLength);
    }

    @Benchmark
    public int learn() {
        return learner.handle(view, packet, 0, packetLength);
    }
}
