package io.kubeverdict.sandbox;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The engine's answer (`matrix --output json`): may pod from open a new connection to pod to. */
public record ExpectedMatrix(int port, String protocol, List<String> pods, Map<String, Map<String, Boolean>> allowed) {

    /** Parses {"port":80,"protocol":"TCP","pods":[...],"allowed":{"x/a":{"x/b":true,...},...}}. */
    @SuppressWarnings("unchecked")
    public static ExpectedMatrix parse(String json) {
        Object parsed = Json.parse(json.strip());
        if (!(parsed instanceof Map<?, ?> root)) {
            throw new IllegalArgumentException("matrix output is not a JSON object");
        }
        List<String> pods = ((List<Object>) root.get("pods")).stream().map(String::valueOf).toList();
        Map<String, Object> allowedJson = (Map<String, Object>) root.get("allowed");
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        for (String from : pods) {
            Map<String, Object> row = allowedJson == null ? null : (Map<String, Object>) allowedJson.get(from);
            Map<String, Boolean> copy = new LinkedHashMap<>();
            for (String to : pods) {
                copy.put(to, row != null && Boolean.TRUE.equals(row.get(to)));
            }
            allowed.put(from, copy);
        }
        return new ExpectedMatrix(((Number) root.get("port")).intValue(), String.valueOf(root.get("protocol")), pods, allowed);
    }

    public boolean allowed(String from, String to) {
        return allowed.get(from).get(to);
    }
}
