// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * The documented JSON object of one probe (`sandbox --output json`, one per line): the engine's
 * matrix under "expected" (from -> to -> may connect, pods sorted like `matrix`), what the probes
 * saw under "observed" (null, with "unsupported" saying why, when the protocol cannot be probed
 * here) and the differing [from, to] pairs.
 */
@JsonPropertyOrder({"port", "protocol", "pods", "expected", "observed", "unsupported", "mismatches"})
public record ProbeJson(
        int port,
        String protocol,
        List<String> pods,
        Map<String, Map<String, Boolean>> expected,
        Map<String, Map<String, Boolean>> observed,
        @JsonInclude(JsonInclude.Include.NON_NULL) String unsupported,
        List<List<String>> mismatches) {
    private static final JsonMapper MAPPER = new JsonMapper();

    public static ProbeJson of(ProbeResult result) {
        boolean unsupported = result.unsupported();
        return new ProbeJson(
                result.expected().port(),
                result.protocol(),
                result.expected().pods(),
                result.expected().allowed(),
                unsupported ? null : result.observed().asBooleans(),
                unsupported
                        ? result.protocol() + " cannot be probed: this kernel has no " + result.protocol() + " sockets"
                        : null,
                result.mismatches());
    }

    /** One line of JSON. */
    public static String write(ProbeResult result) {
        return MAPPER.writeValueAsString(of(result));
    }

    public static ProbeJson read(String json) {
        return MAPPER.readValue(json, ProbeJson.class);
    }
}
