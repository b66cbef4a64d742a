// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.conntrack.RejudgeObserver;
import io.kubeverdict.jni.Errno;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Meters of the re-judging of established connections, and the node's conntrack table as the
 * kernel reports it (entries, the limit, and packets the kernel could not track because the
 * table was full), read when scraped.
 */
public final class ConntrackMetrics implements RejudgeObserver {
    /** Explicit buckets from a change being applied to its connections being cut (seconds). */
    static final Duration[] CUT_LATENCY_BUCKETS = {
        Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
        Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10)
    };

    private final MeterRegistry registry;
    private final Counter examined;
    private final Counter received;
    private final Counter vanished;
    private final Counter[] cutByProtocol = new Counter[4];
    private final Timer cutLatency;
    private final Timer passes;
    private final Counter incompletePasses;
    private final Map<Integer, Counter> dumpErrors = new ConcurrentHashMap<>();
    private final Map<Integer, Counter> cutErrors = new ConcurrentHashMap<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final LongSupplier nanoTime;
    private volatile long behindSince;
    private volatile boolean behind;
    // Micrometer holds gauge targets weakly: keep it reachable.
    private final ProcConntrack proc;

    public ConntrackMetrics(MeterRegistry registry) {
        this(registry, Path.of("/proc"));
    }

    ConntrackMetrics(MeterRegistry registry, Path proc) {
        this(registry, proc, System::nanoTime);
    }

    /** @param nanoTime the re-judging's clock (its {@link #behindSince} times) */
    ConntrackMetrics(MeterRegistry registry, Path proc, LongSupplier nanoTime) {
        this.registry = registry;
        this.nanoTime = nanoTime;
        examined = Counter.builder("kubeverdict_conntrack_flows_examined")
                .description("Established connections judged again after a change (or at start)")
                .register(registry);
        received = Counter.builder("kubeverdict_conntrack_entries_received")
                .description("Conntrack entries the kernel's filtered dumps delivered to the agent")
                .register(registry);
        vanished = Counter.builder("kubeverdict_conntrack_flows_vanished")
                .description("Connections the policy denied that ended before they could be cut")
                .register(registry);
        String[] protocols = {"tcp", "udp", "sctp", "other"};
        for (int i = 0; i < protocols.length; i++) {
            cutByProtocol[i] = Counter.builder("kubeverdict_conntrack_flows_cut")
                    .description("Established connections cut because the policy now denies them")
                    .tag("protocol", protocols[i])
                    .register(registry);
        }
        cutLatency = Timer.builder("kubeverdict_conntrack_cut_latency")
                .description("From a change being applied to a connection it denies being cut")
                .serviceLevelObjectives(CUT_LATENCY_BUCKETS)
                .register(registry);
        passes = Timer.builder("kubeverdict_conntrack_rejudge")
                .description("One pass judging the connections of the endpoints a change affected")
                .serviceLevelObjectives(CUT_LATENCY_BUCKETS)
                .register(registry);
        incompletePasses = Counter.builder("kubeverdict_conntrack_rejudge_incomplete")
                .description("Passes that left endpoints to retry (a dump or a cut failed)")
                .register(registry);
        Gauge.builder("kubeverdict_conntrack_endpoints_pending", pending, AtomicInteger::get)
                .description("Endpoints whose connections wait to be judged again; above 0 for long, "
                        + "connections the policy denies may still be open")
                .register(registry);
        Gauge.builder("kubeverdict_conntrack_rejudge_behind", this, ConntrackMetrics::behindSeconds)
                .description("Age of the oldest applied change whose connections are not all judged again yet "
                        + "(pending, in a pass, or to retry); 0 when caught up")
                .baseUnit("seconds")
                .register(registry);
        this.proc = new ProcConntrack(proc);
        Gauge.builder("kubeverdict_conntrack_entries", this.proc, p -> p.read("sys/net/netfilter/nf_conntrack_count"))
                .description("Entries in the node's conntrack table")
                .register(registry);
        Gauge.builder("kubeverdict_conntrack_entries_max", this.proc, p -> p.read("sys/net/netfilter/nf_conntrack_max"))
                .description("The conntrack table's limit (nf_conntrack_max)")
                .register(registry);
        FunctionCounter.builder("kubeverdict_conntrack_table_full_drops", this.proc, ProcConntrack::tableFullDrops)
                .description("Packets the kernel dropped because the conntrack table was full (the drop column "
                        + "of /proc/net/stat/nf_conntrack)")
                .register(registry);
    }

    private double behindSeconds() {
        long since = behindSince;
        return behind ? Math.max(0, nanoTime.getAsLong() - since) / 1e9 : 0;
    }

    @Override
    public void behindSince(long nanos) {
        behindSince = nanos;
        behind = true;
    }

    @Override
    public void caughtUp() {
        behind = false;
    }

    @Override
    public void dumped(int entries) {
        received.increment(entries);
    }

    @Override
    public void examined() {
        examined.increment();
    }

    @Override
    public void cut(int protocol, long nanosSinceChange) {
        cutByProtocol[protocol == 6 ? 0 : protocol == 17 ? 1 : protocol == 132 ? 2 : 3].increment();
        cutLatency.record(Math.max(0, nanosSinceChange), TimeUnit.NANOSECONDS);
    }

    @Override
    public void vanished() {
        vanished.increment();
    }

    @Override
    public void dumpFailed(int errno) {
        dumpErrors
                .computeIfAbsent(
                        errno,
                        e -> Counter.builder("kubeverdict_conntrack_dump_errors")
                                .description("Conntrack dumps that failed (retried), by errno")
                                .tag("errno", Errno.name(e))
                                .register(registry))
                .increment();
    }

    @Override
    public void cutFailed(int errno) {
        cutErrors
                .computeIfAbsent(
                        errno,
                        e -> Counter.builder("kubeverdict_conntrack_cut_errors")
                                .description("Conntrack updates that failed (their endpoint is retried), by errno")
                                .tag("errno", Errno.name(e))
                                .register(registry))
                .increment();
    }

    @Override
    public void pending(int endpoints) {
        pending.set(endpoints);
    }

    @Override
    public void passFinished(long nanos, boolean complete) {
        passes.record(nanos, TimeUnit.NANOSECONDS);
        if (!complete) {
            incompletePasses.increment();
        }
    }

    /** The kernel's conntrack numbers of this network namespace. */
    static final class ProcConntrack {
        private final Path proc;

        ProcConntrack(Path proc) {
            this.proc = proc;
        }

        /**
         * One read with room for the whole value: a sysctl file answers a read at a non-zero
         * offset with end of file, so a reader that starts small (Files.readString asks for one
         * byte of a file whose size is 0) gets only the first digit.
         */
        double read(String file) {
            try (InputStream in = Files.newInputStream(proc.resolve(file))) {
                byte[] buf = new byte[64];
                int n = in.read(buf);
                return Double.parseDouble(new String(buf, 0, Math.max(n, 0), StandardCharsets.US_ASCII).strip());
            } catch (IOException | NumberFormatException e) {
                return Double.NaN;
            }
        }

        /** The sum over CPUs of the "drop" column (hex) of net/stat/nf_conntrack. */
        double tableFullDrops() {
            try {
                return dropColumnSum(Files.readString(proc.resolve("net/stat/nf_conntrack")));
            } catch (IOException e) {
                return 0;
            }
        }

        static long dropColumnSum(String text) {
            String[] lines = text.strip().split("\n");
            String[] header = lines[0].trim().split("\\s+");
            int column = -1;
            for (int i = 0; i < header.length; i++) {
                if (header[i].equals("drop")) {
                    column = i;
                }
            }
            long sum = 0;
            for (int l = 1; l < lines.length && column >= 0; l++) {
                String[] cells = lines[l].trim().split("\\s+");
                if (column < cells.length) {
                    try {
                        sum += Long.parseLong(cells[column], 16);
                    } catch (NumberFormatException ignored) {
                        // a row we cannot read adds nothing
                    }
                }
            }
            return sum;
        }
    }
}
