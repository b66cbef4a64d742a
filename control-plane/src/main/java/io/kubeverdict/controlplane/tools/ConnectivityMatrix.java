package io.kubeverdict.controlplane.tools;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.proto.v1.Protocol;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Whether each endpoint may open a new connection to each endpoint on one port/protocol. */
public record ConnectivityMatrix(int port, Protocol protocol, List<String> pods,
                                 Map<String, Map<String, Boolean>> allowed) {

    public static ConnectivityMatrix of(OfflineCluster cluster, Protocol protocol, int port) {
        List<String> pods = cluster.endpoints();
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        for (String from : pods) {
            PodModel src = cluster.endpoint(from).orElseThrow();
            Map<String, Boolean> row = new LinkedHashMap<>();
            for (String to : pods) {
                PodModel dst = cluster.endpoint(to).orElseThrow();
                row.put(to, cluster.allowed(src, dst, protocol.getNumber(), port));
            }
            allowed.put(from, row);
        }
        return new ConnectivityMatrix(port, protocol, pods, allowed);
    }

    public boolean allowed(String from, String to) {
        return allowed.get(from).get(to);
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
        StringBuilder sb = new StringBuilder();
        int w = 4;
        for (String p : pods) {
            w = Math.max(w, p.length() + 2);
        }
        sb.append(pad(port + "/" + protocol.name(), w));
        for (String to : pods) {
            sb.append(pad(to, w));
        }
        sb.append('\n');
        for (String from : pods) {
            sb.append(pad(from, w));
            for (String to : pods) {
                sb.append(pad(allowed(from, to) ? "." : "X", w));
            }
            sb.append('\n');
        }
        sb.append("(rows: from, columns: to; . may connect, X may not)\n");
        return sb.toString();
    }

    private static String pad(String s, int w) {
        return s + " ".repeat(Math.max(1, w - s.length()));
    }
}
