package io.kubeverdict.controlplane.tools;

import io.kubeverdict.proto.v1.Protocol;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Whether each pod may open a new connection to each pod on one port/protocol: endpoint pods and
 * hostNetwork pods (addressed by their node, as the upstream conformance suite probes them;
 * listed in {@code hostNetwork}).
 */
public record ConnectivityMatrix(int port, Protocol protocol, List<String> pods, List<String> hostNetwork,
                                 Map<String, Map<String, Boolean>> allowed) {

    public static ConnectivityMatrix of(OfflineCluster cluster, Protocol protocol, int port) {
        List<OfflineCluster.Member> members = cluster.members();
        List<String> pods = members.stream().map(OfflineCluster.Member::key).toList();
        List<String> hostNetwork = members.stream().filter(OfflineCluster.Member::hostNetwork)
                .map(OfflineCluster.Member::key).toList();
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        for (OfflineCluster.Member src : members) {
            Map<String, Boolean> row = new LinkedHashMap<>();
            for (OfflineCluster.Member dst : members) {
                row.put(dst.key(), cluster.allowed(src, dst, protocol.getNumber(), port));
            }
            allowed.put(src.key(), row);
        }
        return new ConnectivityMatrix(port, protocol, pods, hostNetwork, allowed);
    }

    public boolean allowed(String from, String to) {
        return allowed.get(from).get(to);
    }

    /** {"port":80,"protocol":"TCP","pods":[...],"allowed":{"x/a":{"x/a":true,...},...}}; hostNetwork pods are among "pods". */
    public String toJson() {
        Json j = new Json();
        j.beginObject().name("port").value(port).name("protocol").value(protocol.name());
        j.name("pods").beginArray();
        pods.forEach(j::value);
        j.endArray().name("allowed").beginObject();
        for (String from : pods) {
            j.name(from).beginObject();
            for (String to : pods) {
                j.name(to).value(allowed(from, to));
            }
            j.endObject();
        }
        return j.endObject().endObject().toString();
    }

    /** The upstream e2e suite's truth-table layout: "." allowed, "X" denied; rows are sources. */
    public String toTable() {
        StringBuilder sb = new StringBuilder();
        int w = 4;
        for (String p : pods) {
            w = Math.max(w, p.length() + 2);
        }
        sb.append(pad(protocol.name() + "/" + port, w));
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
        if (!hostNetwork.isEmpty()) {
            sb.append("(hostNetwork, addressed by their node: ").append(String.join(", ", hostNetwork)).append(")\n");
        }
        return sb.toString();
    }

    private static String pad(String s, int w) {
        return s + " ".repeat(Math.max(1, w - s.length()));
    }
}
