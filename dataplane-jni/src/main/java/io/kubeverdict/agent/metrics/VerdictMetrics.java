// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.agent.verdict.VerdictObserver;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.runtime.metrics.Histograms;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-packet meters for the verdict loop. Every counter is resolved once up front into an array
 * indexed by family, protocol and verdict, so recording a packet is an array read and an add:
 * no tag lookup, no allocation.
 */
public final class VerdictMetrics implements VerdictObserver {
    private static final Logger log = LoggerFactory.getLogger(VerdictMetrics.class);
    private static final String[] FAMILIES = {"ipv4", "ipv6"};
    private static final String[] PROTOCOLS = {"tcp", "udp", "sctp", "icmp", "icmpv6", "other"};
    private static final String[] VERDICTS = {"accept", "drop"};
    /** Parse + decide: ~100 ns typical (docs/benchmarks.md), microseconds under load, 10 ms means trouble. */
    static final double[] PROCESSING_SECONDS = {1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 1e-2};

    private final Counter[] verdicts = new Counter[FAMILIES.length * PROTOCOLS.length * VERDICTS.length];
    private final Counter[] unreadable = new Counter[PacketParser.RESULTS]; // by parse result; [OK] unused
    private final Counter judgeFailures;
    private final Counter queueFailures;
    private final Timer processing;

    public VerdictMetrics(MeterRegistry registry) {
        for (int f = 0; f < FAMILIES.length; f++) {
            for (int p = 0; p < PROTOCOLS.length; p++) {
                for (int v = 0; v < VERDICTS.length; v++) {
                    verdicts[slot(f, p, v)] = Counter.builder("kubeverdict_verdicts")
                            .description("First packets decided, by address family, protocol and verdict")
                            .tags("family", FAMILIES[f], "protocol", PROTOCOLS[p], "verdict", VERDICTS[v])
                            .register(registry);
                }
            }
        }
        for (int reason = PacketParser.OK + 1; reason < PacketParser.RESULTS; reason++) {
            unreadable[reason] = Counter.builder("kubeverdict_malformed_packets")
                    .description(
                            "Queued packets the agent could not read, by reason; they were dropped (also when fail-open)")
                    .tags("reason", PacketParser.describe(reason))
                    .register(registry);
        }
        judgeFailures = Counter.builder("kubeverdict_judge_failures")
                .description("Packets whose verdict function threw; they got the default verdict")
                .register(registry);
        queueFailures = Counter.builder("kubeverdict_queue_failures")
                .description("Failed receive/verdict calls on the queue")
                .register(registry);
        processing = Histograms.timer(
                registry,
                "kubeverdict_packet_processing",
                "Time from a packet's parse to its verdict decision in the agent, sampled: one packet in "
                        + io.kubeverdict.agent.verdict.VerdictLoop.TIMING_SAMPLE + " is timed",
                PROCESSING_SECONDS);
    }

    @Override
    public void decided(int family, int protocol, boolean allowed, long nanos) {
        verdict(family, protocol, allowed, nanos);
    }

    @Override
    public void unreadable(int reason) {
        boolean known = reason > PacketParser.OK && reason < PacketParser.RESULTS;
        unreadable[known ? reason : PacketParser.MALFORMED].increment();
    }

    @Override
    public void judgeFailed(RuntimeException error) {
        judgeFailures.increment();
        log.error("the verdict function failed; the packet got the fail mode's verdict", error);
    }

    @Override
    public void queueFailed(RuntimeException error) {
        queueFailures.increment();
        log.warn("receiving from or answering the queue failed: {}", error.toString());
    }

    /**
     * Records one decided packet; family 4 or 6, protocol the IANA number; a negative processing
     * time ({@link VerdictObserver#NOT_TIMED}) counts the packet without timing it.
     */
    public void verdict(int family, int protocol, boolean accepted, long processingNanos) {
        verdicts[slot(family == IpAddress.V6 ? 1 : 0, protocolIndex(family, protocol), accepted ? 0 : 1)].increment();
        if (processingNanos >= 0) {
            processing.record(processingNanos, TimeUnit.NANOSECONDS);
        }
    }

    private static int protocolIndex(int family, int protocol) {
        return switch (protocol) {
            case Protocol.TCP_VALUE -> 0;
            case Protocol.UDP_VALUE -> 1;
            case Protocol.SCTP_VALUE -> 2;
            case Protocol.ICMP_VALUE -> family == IpAddress.V4 ? 3 : 5;
            case Protocol.ICMPV6_VALUE -> family == IpAddress.V6 ? 4 : 5;
            default -> 5;
        };
    }

    private static int slot(int f, int p, int v) {
        return (f * PROTOCOLS.length + p) * VERDICTS.length + v;
    }
}
