// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.controlplane.flows.OtlpFlowExport;
import io.kubeverdict.runtime.cli.DurationText;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The control plane's export of flow records as OTLP logs (docs/operations.md, "Flow export"). */
final class FlowExportOptions {
    static final String LOGS_PATH = "/v1/logs";

    @Option(
            names = "--flow-export-otlp",
            paramLabel = "URL",
            description = "Export each flow record as an OpenTelemetry log record over OTLP/HTTP to this collector "
                    + "(http:// or https://; without a path, " + LOGS_PATH + " is added: http://collector:4318 "
                    + "sends to http://collector:4318" + LOGS_PATH + "). Needs the flow history on.")
    String endpoint;

    @Option(
            names = "--flow-export-otlp-header",
            paramLabel = "NAME=VALUE",
            description = "A header sent with every export request (repeatable), e.g. a tenant or an authorization.")
    List<String> headers = List.of();

    @Option(
            names = "--flow-export-otlp-ca",
            paramLabel = "FILE",
            description = "PEM CA certificates an https collector's certificate must chain to (default: the JVM's).")
    Path ca;

    @Option(
            names = "--flow-export-interval",
            paramLabel = "DURATION",
            defaultValue = "5s",
            converter = DurationText.class,
            description = "The longest a flow record waits to be sent with others. Default: ${DEFAULT-VALUE}.")
    Duration interval;

    @Option(
            names = "--flow-export-queue",
            paramLabel = "N",
            defaultValue = "16384",
            description = "At most this many flow records wait to be sent; more are dropped and counted "
                    + "(kubeverdict_flow_export_records_total{outcome=\"dropped\"}). Default: ${DEFAULT-VALUE}.")
    int queue;

    /** Empty without --flow-export-otlp; throws {@link IllegalArgumentException} naming the flag that does not fit. */
    Optional<OtlpFlowExport.Settings> settings(boolean historyOn) {
        if (endpoint == null) {
            if (!headers.isEmpty() || ca != null) {
                throw new IllegalArgumentException(
                        "--flow-export-otlp-header and --flow-export-otlp-ca need --flow-export-otlp");
            }
            return Optional.empty();
        }
        if (!historyOn) {
            throw new IllegalArgumentException(
                    "--flow-export-otlp exports the flow history's records: not with --flow-history-window 0");
        }
        URI uri = endpoint(endpoint);
        if (ca != null && !uri.getScheme().equals("https")) {
            throw new IllegalArgumentException("--flow-export-otlp-ca is for an https endpoint, not " + uri);
        }
        if (interval.toMillis() < 100) {
            throw new IllegalArgumentException("--flow-export-interval must be at least 100ms");
        }
        if (queue < 1) {
            throw new IllegalArgumentException("--flow-export-queue must be at least 1");
        }
        return Optional.of(new OtlpFlowExport.Settings(uri, headers(headers), caPem(ca), interval, queue));
    }

    /** The collector's logs URL: http(s), a host, no query; {@link #LOGS_PATH} when it has no path. */
    static URI endpoint(String text) {
        URI uri;
        try {
            uri = new URI(text.strip());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("--flow-export-otlp: '" + text + "' is no URL: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("--flow-export-otlp: '" + text
                    + "' is no http:// or https:// URL (OTLP/HTTP, e.g. " + "http://collector:4318)");
        }
        if (uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new IllegalArgumentException(
                    "--flow-export-otlp: '" + text + "' needs a host and no query or fragment");
        }
        String path = uri.getRawPath() == null
                        || uri.getRawPath().isEmpty()
                        || uri.getRawPath().equals("/")
                ? LOGS_PATH
                : uri.getRawPath();
        return URI.create(scheme + "://" + uri.getRawAuthority() + path);
    }

    static Map<String, String> headers(List<String> texts) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < texts.size(); i++) {
            String t = texts.get(i);
            int eq = t.indexOf('=');
            if (eq < 1 || t.substring(0, eq).isBlank()) {
                // Not echoed: a header is often a secret.
                throw new IllegalArgumentException(
                        "--flow-export-otlp-header number " + (i + 1) + " is no NAME=VALUE (no name before '=')");
            }
            out.put(t.substring(0, eq).strip(), t.substring(eq + 1));
        }
        return out;
    }

    private static byte[] caPem(Path ca) {
        if (ca == null) {
            return null;
        }
        try {
            return Files.readAllBytes(ca);
        } catch (IOException e) {
            throw new IllegalArgumentException("--flow-export-otlp-ca: cannot read " + ca + ": " + e);
        }
    }
}
