// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Flow records exported as OTLP logs to a receiver built from the official protos on loopback:
 * verdicts of the netpol-basic example (real explanations, as agents relay them) through a real
 * control plane's flow recorder, its batching and the SDK's OTLP/HTTP exporter.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a hang is a failure; no timing is asserted
class OtlpFlowExportTest {
    private static final String EXAMPLE = "../deploy/examples/netpol-basic";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final long MIN = 60_000;

    private ControlPlane cp;
    private FlowRecorder recorder;
    private OfflineCluster cluster;
    private OtlpLogReceiver receiver;
    private MeterRegistry registry;

    @BeforeEach
    void start() throws Exception {
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(Path.of(EXAMPLE), new EngineDirectoryReader()));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        recorder = cp.keepFlowHistory(new FlowRecorder.Settings(
                new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 10_000, 1 << 24),
                null,
                Duration.ofMinutes(1)));
        LoadedManifests m = new ManifestLoader().load(Path.of(EXAMPLE));
        cluster = new OfflineCluster(
                new ClusterObjects(m.namespaces(), m.pods(), m.policies(), m.adminPolicies(), m.nodes()));
        receiver = new OtlpLogReceiver();
    }

    @AfterEach
    void stop() {
        cp.close();
        receiver.close();
    }

    private void export(int queue) {
        recorder.exportTo(r -> {
            registry = r; // the control plane's, which its metrics port serves
            return OtlpFlowExport.start(
                    new OtlpFlowExport.Settings(
                            URI.create(receiver.endpoint()), Map.of(), null, Duration.ofMillis(100), queue),
                    r);
        });
    }

    /** A connection's first packet as the destination's node reports it, decided at {@code millis}. */
    private void relay(String from, String to, long millis) {
        recorder.record(VerdictEvent.newBuilder()
                .setNode(cluster.nodeOf(to).orElseThrow())
                .setTime(Timestamps.fromMillis(millis))
                .setExplanation(cluster.explain(from, to, 6, 80))
                .build());
    }

    private double records(String outcome) {
        return registry().counter(FlowExportCounts.RECORDS, "outcome", outcome).count();
    }

    private double pending() {
        return registry().get("kubeverdict_flow_export_pending").gauge().value();
    }

    private MeterRegistry registry() {
        return registry;
    }

    private static void waitFor(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    @Test
    void eachRecordOfAnEndedBucketArrivesWithItsKeyCountsAndTimes() throws Exception {
        export(1024);
        long t = (System.currentTimeMillis() / MIN - 10) * MIN + 1234; // in a bucket that ended
        relay("10.244.2.10", "10.244.1.10", t); // y/a -> x/a allowed
        relay("10.244.2.10", "10.244.1.10", t + 1);
        relay("10.244.3.10", "10.244.1.10", t); // z/a -> x/a denied
        relay("10.244.1.10", "10.244.1.11", t); // x/a -> x/b allowed
        waitFor("three log records", () -> receiver.received().size() >= 3);

        List<FlowHistory.Held> held = recorder.history().held();
        assertThat(held).hasSize(3);
        assertThat(receiver.received())
                .extracting(OtlpLogReceiver.Received::attributes)
                .containsExactlyInAnyOrderElementsOf(
                        held.stream().map(OtlpFlowExportTest::expected).toList());
        assertThat(receiver.received()).allSatisfy(r -> {
            assertThat(r.service()).isEqualTo("kube-verdict-control-plane");
            assertThat(r.eventName()).isEqualTo("kubeverdict.flow");
        });
        OtlpLogReceiver.Received ya = receiver.received().stream()
                .filter(r -> "y".equals(r.attributes().get("kubeverdict.flow.source.namespace")))
                .findFirst()
                .orElseThrow();
        assertThat(ya.attributes())
                .containsEntry("kubeverdict.flow.destination.namespace", "x")
                .containsEntry("kubeverdict.flow.port", 80L)
                .containsEntry("kubeverdict.flow.protocol", 6L)
                .containsEntry("kubeverdict.flow.verdict", "allowed")
                .containsEntry("kubeverdict.flow.direction", "ingress")
                .containsEntry("kubeverdict.flow.policy", "x/allow-a-from-y-web")
                .containsEntry("kubeverdict.flow.rule", "ingress[0]")
                .containsEntry("kubeverdict.flow.count", 2L)
                .containsEntry("kubeverdict.flow.first_seen_unix_ms", t)
                .containsEntry("kubeverdict.flow.last_seen_unix_ms", t + 1)
                .containsEntry("kubeverdict.flow.bucket_start_unix_ms", t - 1234);
        assertThat(ya.timeUnixNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(t + 1));
        assertThat(ya.body())
                .contains("y/")
                .contains("-> x/")
                .contains("allowed")
                .contains("2 times");
        waitFor("the exported counter", () -> records("exported") == 3);

        // A verdict uploaded late, into the bucket already sent: sent again with its own count.
        relay("10.244.2.10", "10.244.1.10", t + 2);
        waitFor("the late record", () -> receiver.received().size() >= 4);
        assertThat(receiver.received().get(3).attributes())
                .containsEntry("kubeverdict.flow.source.namespace", "y")
                .containsEntry("kubeverdict.flow.count", 1L)
                .containsEntry("kubeverdict.flow.bucket_start_unix_ms", t - 1234);
        assertThat(records("dropped")).isZero();
        assertThat(records("failed")).isZero();
    }

    @Test
    void aSlowCollectorMakesRecordsDroppedAndCountedWhileTheRecorderGoesOn() throws Exception {
        receiver.hold();
        export(4);
        long start = (System.currentTimeMillis() / MIN - 50) * MIN;
        int flows = 40;
        for (int i = 0; i < flows; i++) {
            relay("10.244.2.10", "10.244.1.10", start + i * MIN); // one record per (ended) bucket
        }
        waitFor("drops", () -> records("dropped") > 0);
        // The recorder is not held up: it records (new buckets, new flows) while the export waits.
        relay("10.244.3.10", "10.244.1.10", start);
        assertThat(recorder.history().records()).isEqualTo(flows + 1);
        assertThat(pending()).isLessThanOrEqualTo(4);

        receiver.release();
        waitFor(
                "every record sent, failed or dropped",
                () -> pending() == 0 && records("exported") + records("failed") + records("dropped") == flows + 1);
        assertThat(records("exported")).isEqualTo(receiver.received().size());
        assertThat(records("dropped")).isPositive();
    }

    @Test
    void anUnreachableCollectorIsCountedLoggedOnceAndTheRecorderGoesOn() throws Exception {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger countsLog = (Logger) LoggerFactory.getLogger(FlowExportCounts.class);
        countsLog.addAppender(logged);
        try {
            receiver.stop();
            export(1024);
            long t = (System.currentTimeMillis() / MIN - 10) * MIN;
            relay("10.244.2.10", "10.244.1.10", t);
            relay("10.244.3.10", "10.244.1.10", t);
            waitFor("failures", () -> records("failed") == 2 && pending() == 0);
            relay("10.244.1.10", "10.244.1.11", t); // a second batch of the same streak
            assertThat(recorder.history().records()).isEqualTo(3);
            waitFor("the next failure", () -> records("failed") == 3 && pending() == 0);
            assertThat(records("exported")).isZero();
            assertThat(logged.list)
                    .filteredOn(e -> e.getLevel() == Level.WARN)
                    .singleElement()
                    .satisfies(e -> assertThat(e.getFormattedMessage())
                            .contains("cannot export flow records to " + receiver.endpoint()));
        } finally {
            countsLog.detachAppender(logged);
        }
    }

    /** The documented attribute names, written out from the record's key independently of FlowLogAttributes. */
    private static Map<String, Object> expected(FlowHistory.Held h) {
        Map<String, Object> m = new HashMap<>();
        FlowKey k = h.key();
        side(m, "source", k.source(), h.sourcePod(), h.sourceIp());
        side(m, "destination", k.destination(), h.destinationPod(), h.destinationIp());
        m.put("kubeverdict.flow.protocol", (long) k.protocol());
        m.put("kubeverdict.flow.port", (long) k.port());
        m.put("kubeverdict.flow.verdict", k.verdict() == Verdict.VERDICT_ALLOW ? "allowed" : "denied");
        put(m, "kubeverdict.flow.direction", k.direction());
        put(m, "kubeverdict.flow.policy", k.policyText());
        put(m, "kubeverdict.flow.policy.tier", k.policyTier());
        put(m, "kubeverdict.flow.policy.name", k.policyName());
        put(m, "kubeverdict.flow.rule", k.rule());
        put(m, "kubeverdict.flow.decided_by", k.decidedBy());
        m.put("kubeverdict.flow.count", h.count());
        m.put("kubeverdict.flow.bucket_start_unix_ms", h.bucketStart());
        m.put("kubeverdict.flow.first_seen_unix_ms", h.firstSeen());
        m.put("kubeverdict.flow.last_seen_unix_ms", h.lastSeen());
        return m;
    }

    private static void side(Map<String, Object> m, String side, FlowKey.Side s, String pod, String ip) {
        String p = "kubeverdict.flow." + side + ".";
        put(m, p + "namespace", s.namespace());
        put(m, p + "workload", s.workload());
        if (!s.labels().isEmpty()) {
            m.put(
                    p + "labels",
                    s.labels().entrySet().stream()
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .sorted()
                            .toList());
        }
        put(m, p + "address", s.address());
        put(m, p + "last_pod", pod);
        put(m, p + "last_ip", ip);
    }

    private static void put(Map<String, Object> m, String key, String value) {
        if (value != null && !value.isEmpty()) {
            m.put(key, value);
        }
    }
}
