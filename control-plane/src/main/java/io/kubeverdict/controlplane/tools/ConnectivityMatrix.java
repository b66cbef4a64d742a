// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.kubeverdict.proto.v1.Protocol;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * /**
 * Whether each pod may open a new connection to each pod on one port/protocol: endpoint pods and
 * hostNetwork pods (addressed by their node, as the upstream conformance suite probes them;
 * listed in {@code hostNetwork}). The record holds the whole matrix (for small clusters and
 * tests); {@link #writeJson} and {@link #writeTable} stream one straight from a cluster, a row at
 * a time, so that the output of a big cluster (50k pods: 2.5 billion cells) never has to fit in
 * memory.
 */
public record ConnectivityMatrix(
        int port,
        Protocol protocol,
        List<String> pods,
        List<String> hostNetwork,
        Map<String, Map<String, Boolean>> allowed) {
    /** Leaves the caller's writer open (it may be stdout). */
    private static final JsonMapper JSON =
            JsonMapper.builder().disable(StreamWriteFeature.AUTO_CLOSE_TARGET).build();

    public static ConnectivityMatrix of(OfflineCluster cluster, Protocol protocol, int port) {
        return of(cluster, protocol, port, m -> true);
    }

    /** The matrix among the members {@code include} accepts (the console's chosen namespaces). */
    public static ConnectivityMatrix of(
            OfflineCluster cluster, Protocol protocol, int port, Predicate<OfflineCluster.Member> include) {
        List<OfflineCluster.Member> members =
                cluster.members().stream().filter(include).toList();
        List<String> pods = keys(members);
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        Rows rows = rows(cluster, members, protocol, port);
        for (int i = 0; i < pods.size(); i++) {
            boolean[] row = rows.row(i);
            Map<String, Boolean> cells = new LinkedHashMap<>();
            for (int j = 0; j < pods.size(); j++) {
                cells.put(pods.get(j), row[j]);
            }
            allowed.put(pods.get(i), cells);
        }
        return new ConnectivityMatrix(port, protocol, pods, hostNetworkKeys(members), allowed);
    }

    public boolean allowed(String from, String to) {
        return allowed.get(from).get(to);
    }

    /** {"port":80,"protocol":"TCP","pods":[...],"allowed":{"x/a":{"x/a":true,...},...}}; hostNetwork pods are among "pods". */
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
        table(port, protocol, pods, hostNetwork, ownRows(), w);
        return w.toString();
    }

    /** {@link #toJson()} of the cluster's matrix, computed and written a row at a time. */
    public static void writeJson(OfflineCluster cluster, Protocol protocol, int port, Writer out) {
        writeJson(cluster, protocol, port, m -> true, out);
    }

    /** As {@link #writeJson(OfflineCluster, Protocol, int, Writer)}, among the members {@code include} accepts. */
    public static void writeJson(
            OfflineCluster cluster, Protocol protocol, int port, Predicate<OfflineCluster.Member> include, Writer out) {
        List<OfflineCluster.Member> members =
                cluster.members().stream().filter(include).toList();
        json(port, protocol, keys(members), rows(cluster, members, protocol, port), out);
    }

    /** {@link #toTable()} of the cluster's matrix, computed and written a row at a time. */
    public static void writeTable(OfflineCluster cluster, Protocol protocol, int port, Writer out) {
        writeTable(cluster, protocol, port, m -> true, out);
    }

    /** As {@link #writeTable(OfflineCluster, Protocol, int, Writer)}, among the members {@code include} accepts. */
    public static void writeTable(
            OfflineCluster cluster, Protocol protocol, int port, Predicate<OfflineCluster.Member> include, Writer out) {
        List<OfflineCluster.Member> members =
                cluster.members().stream().filter(include).toList();
        table(port, protocol, keys(members), hostNetworkKeys(members), rows(cluster, members, protocol, port), out);
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

    private static Rows rows(OfflineCluster cluster, List<OfflineCluster.Member> members, Protocol protocol, int port) {
        return i -> {
            OfflineCluster.Member src = members.get(i);
            boolean[] row = new boolean[members.size()];
            for (int j = 0; j < row.length; j++) {
                row[j] = cluster.allowed(src, members.get(j), protocol.getNumber(), port);
            }
            return row;
        };
    }

    private static List<String> keys(List<OfflineCluster.Member> members) {
        return members.stream().map(OfflineCluster.Member::key).toList();
    }

    private static List<String> hostNetworkKeys(List<OfflineCluster.Member> members) {
        return members.stream()
                .filter(OfflineCluster.Member::hostNetwork)
                .map(OfflineCluster.Member::key)
                .toList();
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

    private static void table(
            int port, Protocol protocol, List<String> pods, List<String> hostNetwork, Rows rows, Writer out) {
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
            if (!hostNetwork.isEmpty()) {
                out.append("(hostNetwork, addressed by their node: ")
                        .append(String.join(", ", hostNetwork))
                        .append(")\n");
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String pad(String s, int w) {
        return s + " ".repeat(Math.max(1, w - s.length()));
    }
}
