package io.kubeverdict.agent.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Per-packet meters for the verdict loop. Every counter is resolved once up front into an array
 * indexed by family, protocol and verdict, so recording a packet is an array read and an add:
 * no tag lookup, no allocation.
 */
public final class VerdictMetrics {
    private static final String[] FAMILIES = {"ipv4", "ipv6"};
    private static final String[] PROTOCOLS = {"tcp", "udp", "sctp", "icmp", "icmpv6", "other"};
    private static final String[] VERDICTS = {"accept", "drop"};

    private final Counter[] verdicts = new Counter[FAMILIES.length * PROTOCOLS.length * VERDICTS.length];
    private final Counter malformed;
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
        malformed = Counter.builder("kubeverdict_malformed_packets")
                .description("Queued packets too short or odd to parse; they got the default verdict")
                .register(registry);
        processing = Timer.builder("kubeverdict_packet_processing")
                .description("Time from a packet's parse to its verdict decision in the agent")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100))
                .maximumExpectedValue(Duration.ofMillis(10))
                .register(registry);
    }

    /** Records one decided packet; family 4 or 6, protocol the IANA number. */
    public void verdict(int family, int protocol, boolean accepted, long processingNanos) {
        verdicts[slot(family == 6 ? 1 : 0, protocolIndex(family, protocol), accepted ? 0 : 1)].increment();
        processing.record(processingNanos, TimeUnit.NANOSECONDS);
    }

    public void malformed() {
        malformed.increment();
    }

    private static int protocolIndex(int family, int protocol) {
        return switch (protocol) {
            case 6 -> 0;
            case 17 -> 1;
            case 132 -> 2;
            case 1 -> family == 4 ? 3 : 5;
            case 58 -> family == 6 ? 4 : 5;
            default -> 5;
        };
    }

    private static int slot(int f, int p, int v) {
        return (f * PROTOCOLS.length + p) * VERDICTS.length + v;
    }
}
