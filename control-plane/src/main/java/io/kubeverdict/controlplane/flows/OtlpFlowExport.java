// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.logs.Logger;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporter;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporterBuilder;
import io.opentelemetry.sdk.common.export.RetryPolicy;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.export.BatchLogRecordProcessor;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;
import io.opentelemetry.sdk.resources.Resource;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.slf4j.LoggerFactory;

/**
 * Flow records as OpenTelemetry log records over OTLP/HTTP (protobuf), through the SDK's batch
 * processor and OTLP exporter with the JDK's HTTP client. {@link #accept} never waits: a record
 * that finds {@code maxQueue} records not yet sent is dropped and counted ({@link FlowExportCounts}).
 */
public final class OtlpFlowExport implements FlowSink {
    private static final org.slf4j.Logger log = LoggerFactory.getLogger(OtlpFlowExport.class);
    /** One request, retries included; the batch processor waits a little longer for it. */
    static final Duration EXPORT_TIMEOUT = Duration.ofSeconds(10);

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(15);
    private static final int MAX_BATCH = 512;
    /** The SDK logs every failed request (throttled); FlowExportCounts logs a streak once, with the reason. */
    private static final java.util.logging.Logger SDK_EXPORT_LOG =
            java.util.logging.Logger.getLogger("io.opentelemetry.exporter.otlp.internal.HttpExporter");

    /**
     * @param endpoint the collector's OTLP/HTTP logs URL (http or https, e.g. http://collector:4318/v1/logs)
     * @param trustedCertificatesPem CAs for an https endpoint, null for the JVM's
     * @param interval the longest a record waits for its batch
     */
    public record Settings(
            URI endpoint, Map<String, String> headers, byte[] trustedCertificatesPem, Duration interval, int maxQueue) {
        public Settings {
            headers = Map.copyOf(headers);
            if (maxQueue < 1) {
                throw new IllegalArgumentException("the flow export's queue must hold at least 1 record");
            }
        }
    }

    private final URI endpoint;
    private final FlowExportCounts counts;
    private final SdkLoggerProvider provider;
    private final Logger logger;

    private OtlpFlowExport(URI endpoint, FlowExportCounts counts, SdkLoggerProvider provider) {
        this.endpoint = endpoint;
        this.counts = counts;
        this.provider = provider;
        this.logger = provider.loggerBuilder("io.kubeverdict.flows").build();
    }

    /** Throws {@link IllegalArgumentException} for settings the exporter refuses (an unusable endpoint or CA). */
    public static OtlpFlowExport start(Settings s, MeterRegistry registry) {
        OtlpHttpLogRecordExporterBuilder exporter = OtlpHttpLogRecordExporter.builder()
                .setEndpoint(s.endpoint().toString())
                .setTimeout(EXPORT_TIMEOUT)
                .setRetryPolicy(RetryPolicy.getDefault())
                .setMeterProvider(MeterProvider::noop);
        s.headers().forEach(exporter::addHeader);
        if (s.trustedCertificatesPem() != null) {
            try {
                exporter.setTrustedCertificates(s.trustedCertificatesPem());
            } catch (IllegalStateException e) { // the SDK's word for CA certificates it cannot use
                throw new IllegalArgumentException(
                        "unusable CA certificates for " + s.endpoint() + ": " + e.getMessage());
            }
        }
        LogRecordExporter otlp = exporter.build();
        FlowExportCounts counts = new FlowExportCounts(s.endpoint().toString(), s.maxQueue(), registry);
        SDK_EXPORT_LOG.setLevel(Level.OFF);
        BatchLogRecordProcessor batches = BatchLogRecordProcessor.builder(new CountingLogExporter(otlp, counts))
                // Our bound admits at most maxQueue records, so this queue never overflows on its own.
                .setMaxQueueSize(s.maxQueue())
                .setMaxExportBatchSize(Math.min(MAX_BATCH, s.maxQueue()))
                .setScheduleDelay(s.interval())
                .setExporterTimeout(EXPORT_TIMEOUT.plusSeconds(5))
                .setMeterProvider(MeterProvider::noop)
                .build();
        SdkLoggerProvider provider = SdkLoggerProvider.builder()
                .setResource(Resource.getDefault().toBuilder()
                        .put("service.name", "kube-verdict-control-plane")
                        .build())
                .addLogRecordProcessor(batches)
                .build();
        log.info("exporting flow records as OTLP logs to {}", s.endpoint());
        return new OtlpFlowExport(s.endpoint(), counts, provider);
    }

    @Override
    public void accept(List<FlowHistory.Held> records) {
        for (FlowHistory.Held h : records) {
            if (!counts.admit()) {
                continue;
            }
            try {
                logger.logRecordBuilder()
                        .setEventName(FlowLogAttributes.EVENT_NAME)
                        .setTimestamp(h.lastSeen(), TimeUnit.MILLISECONDS)
                        .setSeverity(Severity.INFO)
                        .setBody(FlowLogAttributes.body(h))
                        .setAllAttributes(FlowLogAttributes.of(h))
                        .emit();
            } catch (RuntimeException e) {
                counts.abandoned();
                log.warn("flow export: cannot build a log record for {}: {}", h.key(), e.toString());
            }
        }
    }

    @Override
    public void close() {
        var done = provider.shutdown().join(CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (!done.isSuccess()) {
            log.warn("flow export to {}: not every record was sent before shutdown", endpoint);
        }
    }
}
