// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static io.kubeverdict.sandbox.FaultBed.NODE1;
import static io.kubeverdict.sandbox.FaultBed.NODE2;
import static io.kubeverdict.sandbox.FaultBed.POLICIES_A;
import static io.kubeverdict.sandbox.FaultBed.POLICIES_B;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testing.tier.EndToEndTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The soak (issue 15): new TCP connections between every ordered pod pair at a steady rate
 * ({@link ConnectionLoad}) while the policies change every second (A and B in turn, each waited
 * for until every agent reports it applied), on the {@link FaultBed}'s real processes. Every
 * connection is judged against the expectation of its moment; wrong verdicts must be 0, and the
 * resident memory of the control plane and both agents must stay bounded.
 *
 * <p>The test run does a slice ({@value #CONNECTIONS_PROPERTY} = 20000 over
 * {@value #SECONDS_PROPERTY} = 30); the soak profile runs the hour-scale benchmark
 * (1,000,000 connections over 3600 s): {@code ./mvnw -o -B -pl sandbox -am verify -Psoak}.
 */
@EndToEndTest
@ExtendWith(FaultBed.Resolver.class)
class SoakTest {
    static final String CONNECTIONS_PROPERTY = "kubeverdict.soak.connections";
    static final String SECONDS_PROPERTY = "kubeverdict.soak.seconds";
    static final Duration CHANGE_EVERY = Duration.ofSeconds(1);
    static final Duration TIMEOUT = Duration.ofMillis(500);
    static final Duration RETRY_TIMEOUT = Duration.ofSeconds(2);
    /** What a JVM may add on top of twice its resident memory at the start (heap it had not touched yet). */
    static final long RSS_SLACK_KIB = 64 * 1024;

    @Test
    void connectionsUnderAPolicyChangeEverySecond(FaultBed bed) throws Exception {
        long connections = Long.getLong(CONNECTIONS_PROPERTY, 20_000);
        Duration duration = Duration.ofSeconds(Long.getLong(SECONDS_PROPERTY, 30));
        Sandbox sandbox = bed.sandbox;
        EnforcementModel first = bed.converge(POLICIES_A);
        Verdicts a = first.enforced("A enforced");
        ExpectationTimeline timeline = new ExpectationTimeline(a.name(), a);
        Map<String, ManagedProcess> processes = processes(sandbox);
        RssSamples rss = new RssSamples(processes);
        rss.sample();

        PolicyFlipper flipper = new PolicyFlipper(bed, timeline, a);
        Thread changes = new Thread(flipper, "soak-policy-changes");
        changes.setDaemon(true);
        changes.start();
        Thread sampler =
                new Thread(() -> rss.every(Duration.ofSeconds(Math.max(2, duration.toSeconds() / 30))), "soak-rss");
        sampler.setDaemon(true);
        sampler.start();
        ConnectionLoad.Result result;
        try {
            result = new ConnectionLoad(sandbox.testbed(), timeline, EnforcementModel.PORT, TIMEOUT, RETRY_TIMEOUT)
                    .run(connections, duration);
        } finally {
            flipper.stop();
            changes.join(60_000);
            sampler.interrupt();
            sampler.join(10_000);
        }
        rss.sample();

        bed.report("soak: %s", result);
        bed.report("soak: %s", flipper);
        rss.report(bed);
        assertThat(flipper.failure()).as("policy changes").isNull();
        assertThat(result.wrong())
                .as("wrong verdicts (first %d)", result.wrong().size())
                .isEmpty();
        assertThat(result.wrongCount()).isZero();
        assertThat(result.connected()).as("connections that opened").isPositive();
        assertThat(result.denied()).as("connections that were denied").isPositive();
        assertThat(result.strict())
                .as("connections judged against one steady expectation")
                .isPositive();
        assertThat(flipper.changes()).as("policy changes").isGreaterThanOrEqualTo((int) (duration.toSeconds() / 4));
        for (Map.Entry<String, ManagedProcess> p : processes.entrySet()) {
            assertThat(p.getValue().alive()).as(p.getKey() + " still runs").isTrue();
            long start = rss.first(p.getKey());
            long end = rss.last(p.getKey());
            assertThat(end)
                    .as("%s resident KiB at the end vs %d at the start", p.getKey(), start)
                    .isLessThan(start * 2 + RSS_SLACK_KIB);
        }
    }

    private static Map<String, ManagedProcess> processes(Sandbox sandbox) {
        Map<String, ManagedProcess> out = new LinkedHashMap<>();
        out.put("control-plane", sandbox.controlPlane());
        out.put("agent " + NODE1, sandbox.agent(NODE1));
        out.put("agent " + NODE2, sandbox.agent(NODE2));
        return out;
    }

    /** Writes A and B in turn, one change a second (or as soon as the last one is applied, when that takes longer). */
    static final class PolicyFlipper implements Runnable {
        private final FaultBed bed;
        private final ExpectationTimeline timeline;
        private final List<Double> convergence = Collections.synchronizedList(new ArrayList<>());
        private volatile boolean running = true;
        private volatile Throwable failure;
        private Verdicts current;

        PolicyFlipper(FaultBed bed, ExpectationTimeline timeline, Verdicts initial) {
            this.bed = bed;
            this.timeline = timeline;
            this.current = initial;
        }

        @Override
        public void run() {
            boolean toB = true;
            try {
                while (running) {
                    long start = System.nanoTime();
                    Verdicts next =
                            bed.stage(toB ? POLICIES_B : POLICIES_A).enforced(toB ? "B enforced" : "A enforced");
                    timeline.enter("converging on " + next.name().charAt(0), current, next);
                    long published = System.nanoTime();
                    bed.sandbox.publish();
                    bed.sandbox.awaitConverged();
                    convergence.add(FaultBed.seconds(published));
                    timeline.enter(next.name(), next);
                    current = next;
                    toB = !toB;
                    long left = CHANGE_EVERY.toNanos() - (System.nanoTime() - start);
                    if (left > 0 && running) {
                        Thread.sleep(left / 1_000_000);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                failure = t;
            }
        }

        void stop() {
            running = false;
        }

        Throwable failure() {
            return failure;
        }

        int changes() {
            return convergence.size();
        }

        @Override
        public String toString() {
            List<Double> sorted;
            synchronized (convergence) {
                sorted = new ArrayList<>(convergence);
            }
            Collections.sort(sorted);
            if (sorted.isEmpty()) {
                return "no policy change completed";
            }
            return String.format(
                    Locale.ROOT,
                    "%d policy changes, written -> every agent applied: p50 %.2fs, p99 %.2fs, max %.2fs",
                    sorted.size(),
                    sorted.get(sorted.size() / 2),
                    sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * 0.99) - 1)),
                    sorted.get(sorted.size() - 1));
        }
    }

    /** VmRSS of the processes over the run. */
    static final class RssSamples {
        private final Map<String, ManagedProcess> processes;
        private final Map<String, List<Long>> samples = new LinkedHashMap<>();

        RssSamples(Map<String, ManagedProcess> processes) {
            this.processes = processes;
            processes.keySet().forEach(k -> samples.put(k, new ArrayList<>()));
        }

        synchronized void sample() {
            processes.forEach((name, p) -> samples.get(name).add(p.rssKib()));
        }

        void every(Duration period) {
            try {
                while (true) {
                    Thread.sleep(period.toMillis());
                    sample();
                }
            } catch (InterruptedException e) {
                // the run is over
            }
        }

        synchronized long first(String name) {
            return samples.get(name).get(0);
        }

        synchronized long last(String name) {
            List<Long> s = samples.get(name);
            return s.get(s.size() - 1);
        }

        synchronized void report(FaultBed bed) {
            samples.forEach((name, s) -> bed.report(
                    "soak: %s VmRSS start %d MiB, end %d MiB, max %d MiB (%d samples: %s)",
                    name,
                    s.get(0) / 1024,
                    s.get(s.size() - 1) / 1024,
                    s.stream().mapToLong(Long::longValue).max().orElse(-1) / 1024,
                    s.size(),
                    s.stream().map(k -> String.valueOf(k / 1024)).toList()));
        }
    }
}
