package io.kubeverdict.controlplane.tools;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.proto.v1.Protocol;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Whether each endpoint may open a new connection to each endpoint on one port/protocol. The
 * record holds the whole matrix (for small clusters and tests); {@link #writeJson} and
 * {@link #writeTable} stream one straight from a cluster, a row at a time, so that the output of a
 * big cluster (50k pods: 2.5 billion cells) never has to fit in memory.
 */
public record ConnectivityMatrix(int port, Protocol protocol, List<String> pods,
                                 Map<String, Map<String, Boolean>> allowed) {
    /** Leaves the caller's writer open (it may be stdout). */
    private static final JsonMapper JSON = JsonMapper.builder().disable(StreamWriteFeature.AUTO_CLOSE_TARGET).build();

    public static ConnectivityMatrix of(OfflineCluster cluster, Protocol protocol, int port) {
        List<PodModel> endpoints = cluster.endpointModels();
        List<String> pods = endpoints.stream().map(PodModel::key).toList();
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        Rows rows = rows(cluster, endpoints, protocol, port);
        for (int i = 0; i < pods.size(); i++) {
            boolean[] row = rows.row(i);
            Map<String, Boolean> cells = new LinkedHashMap<>();
            for (int j = 0; j < pods.size(); j++) {
                cells.put(pods.get(j), row[j]);
            }
            allowed.put(pods.get(i), cells);
        }
        return new ConnectivityMatrix(port, protocol, pods, allowed);
    }

    public boolean allowed(String from, String to) {
        return allowed.get(from).get(to);
    }

    /** {"port":80,"protocol":"TCP","pods":[...],"allowed":{"x/a":{"x/a":true,...},...}} */
    public String toJson() {
        StringWriter w = new StringWriter();
        json(port, protocol, pods, ownRows(), w);
        return w.toString();
    }

    /** {"port":80,"protocol":"TCP","pods":[...],"allowed":{"x/a":{"x/a":true,...},...}}, as plain values. */
    public Map<String, Object> toValue() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("port", port);
        out.put("protocol", protocol.name());
        out.put("pods", pods);
        out.put("allowed", allowed);
        return out;
    }

    /** The upstream e2e suite's truth-table layout: "." allowed, "X" denied; rows are sources. */
    public String toTable() {
        StringWriter w = new StringWriter();
        table(port, protocol, pods, ownRows(), w);
        return w.toString();
    }

    /** {@link #toJson()} of the cluster's matrix, computed and written a row at a time. */
    public static void writeJson(OfflineCluster cluster, Protocol protocol, int port, Writer out) {
        List<PodModel> endpoints = cluster.endpointModels();
        json(port, protocol, endpoints.stream().map(PodModel::key).toList(),
                rows(cluster, endpoints, protocol, port), out);
    }

    /** {@link #toTable()} of the cluster's matrix, computed and written a row at a time. */
    public static void writeTable(OfflineCluster cluster, Protocol protocol, int port, Writer out) {
        List<PodModel> endpoints = cluster.endpointModels();
        table(port, protocol, endpoints.stream().map(PodModel::key).toList(),
                rows(cluster, endpoints, protocol, port), out);
    }

    /** Row {@code from}: whether pod {@code from} may connect to each pod, in pod order. */
    private interface Rows {
        boolean[] row(int from);
    }

    private Rows ownRows() {
        return i -> {
            Map<String, Boolean> cells = allowed.get(pods.get(i));
            boolean[] row = new boolean[pods.size()];
            for (int j = 0; j < row.length; j++) {
                row[j] = cells.get(pods.get(j));
            }
            return row;
        };
    }

    private static Rows rows(OfflineCluster cluster, List<PodModel> endpoints, Protocol protocol, int port) {
        return i -> {
            PodModel src = endpoints.get(i);
            boolean[] row = new boolean[endpoints.size()];
            for (int j = 0; j < row.length; j++) {
                row[j] = cluster.allowed(src, endpoints.get(j), protocol.getNumber(), port);
            }
            return row;
        };
    }

    private static void json(int port, Protocol protocol, List<String> pods, Rows rows, Writer out) {
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberProperty("port", port);
            g.writeStringProperty("protocol", protocol.name());
            g.writeName("pods");
            g.writeStartArray();
            for (String p : pods) {
                g.writeString(p);
            }
            g.writeEndArray();
            g.writeName("allowed");
            g.writeStartObject();
            for (int i = 0; i < pods.size(); i++) {
                boolean[] row = rows.row(i);
                g.writeName(pods.get(i));
                g.writeStartObject();
                for (int j = 0; j < row.length; j++) {
                    g.writeBooleanProperty(pods.get(j), row[j]);
                }
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeEndObject();
        }
    }

    private static void table(int port, Protocol protocol, List<String> pods, Rows rows, Writer out) {
        int w = 4;
        for (String p : pods) {
            w = Math.max(w, p.length() + 2);
        }
        try {
            StringBuilder line = new StringBuilder(pad(port + "/" + protocol.name(), w));
            for (String to : pods) {
                line.append(pad(to, w));
            }
            out.append(line).append('\n');
            for (int i = 0; i < pods.size(); i++) {
                boolean[] row = rows.row(i);
                line.setLength(0);
                line.append(pad(pods.get(i), w));
                for (boolean allowed : row) {
                    line.append(pad(allowed ? "." : "X", w));
                }
                out.append(line).append('\n');
            }
            out.append("(rows: from, columns: to; . may connect, X may not)\n");
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String pad(String s, int w) {
        return s + " ".repeat(Math.max(1, w - s.length()));
    }
}
