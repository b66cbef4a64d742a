// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testbed.ObservedMatrix;
import io.kubeverdict.testbed.Outcome;
import io.kubeverdict.testbed.ServePort;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** Comparing expected with observed, and the two output forms. */
class ReportTest {
    private static final JsonMapper JSON = new JsonMapper();

    /** x/a may reach itself but not x/b; x/b may reach both. */
    private static ConnectivityMatrix expected(Protocol protocol, boolean aToA) {
        Map<String, Map<String, Boolean>> allowed = new LinkedHashMap<>();
        allowed.put("x/a", new LinkedHashMap<>(Map.of("x/a", aToA, "x/b", false)));
        allowed.put("x/b", new LinkedHashMap<>(Map.of("x/a", true, "x/b", true)));
        return new ConnectivityMatrix(80, protocol, List.of("x/a", "x/b"), List.of(), allowed);
    }

    private static ObservedMatrix observed(Protocol protocol, Outcome aa, Outcome ab, Outcome ba, Outcome bb) {
        Map<String, Map<String, Outcome>> o = new LinkedHashMap<>();
        o.put("x/a", new LinkedHashMap<>(Map.of("x/a", aa, "x/b", ab)));
        o.put("x/b", new LinkedHashMap<>(Map.of("x/a", ba, "x/b", bb)));
        return new ObservedMatrix(new ServePort(80, protocol), List.of("x/a", "x/b"), o);
    }

    @Test
    @SuppressWarnings("unchecked")
    void namesEveryMismatchingPairInJsonAndTable() {
        ProbeResult result = ProbeResult.compare(
                expected(Protocol.TCP, true),
                observed(Protocol.TCP, Outcome.CONNECTED, Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED));
        assertThat(result.agrees()).isFalse();
        assertThat(result.mismatches()).containsExactly(List.of("x/a", "x/b"), List.of("x/b", "x/a"));

        String json = ProbeJson.write(result);
        assertThat(json)
                .startsWith("{\"port\":80,\"protocol\":\"TCP\",\"pods\":[\"x/a\",\"x/b\"],\"expected\":{")
                .endsWith("\"mismatches\":[[\"x/a\",\"x/b\"],[\"x/b\",\"x/a\"]]}")
                .doesNotContain("\n");
        Map<String, Object> back = JSON.readValue(json, LinkedHashMap.class);
        assertThat(back.keySet()).containsExactly("port", "protocol", "pods", "expected", "observed", "mismatches");
        assertThat(back.get("observed"))
                .isEqualTo(Map.of("x/a", Map.of("x/a", true, "x/b", true), "x/b", Map.of("x/a", false, "x/b", true)));
        assertThat(ProbeJson.read(json)).isEqualTo(ProbeJson.of(result));

        String table = TableRenderer.render(result);
        assertThat(table)
                .contains("2 of 2 pairs differ")
                .contains("MISMATCH x/a -> x/b: expected denied, observed CONNECTED")
                .contains("MISMATCH x/b -> x/a: expected allowed, observed TIMEOUT");
    }

    @Test
    void agreementHasNoMismatches() {
        ProbeResult result = ProbeResult.compare(
                expected(Protocol.TCP, true),
                observed(Protocol.TCP, Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED, Outcome.CONNECTED));
        assertThat(result.agrees()).isTrue();
        assertThat(TableRenderer.render(result)).contains("80/TCP: observed == expected (2 pairs)");
    }

    @Test
    void loopbackIsShownButNotCompared() {
        // Under a deny-all the engine says x/a -> x/a is denied, but that connection never leaves the pod.
        ConnectivityMatrix expected = expected(Protocol.TCP, false);
        assertThat(expected.allowed("x/a", "x/a")).isFalse();
        ProbeResult result = ProbeResult.compare(
                expected,
                observed(Protocol.TCP, Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED, Outcome.CONNECTED));
        assertThat(result.agrees()).isTrue();
        assertThat(TableRenderer.render(result)).doesNotContain("!").contains("loopback");
    }

    @Test
    @SuppressWarnings("unchecked")
    void sctpIsReportedUnsupportedNotCompared() {
        ProbeResult result = ProbeResult.compare(
                expected(Protocol.SCTP, true),
                observed(
                        Protocol.SCTP,
                        Outcome.UNSUPPORTED,
                        Outcome.UNSUPPORTED,
                        Outcome.UNSUPPORTED,
                        Outcome.UNSUPPORTED));
        assertThat(result.unsupported()).isTrue();
        assertThat(result.agrees()).isTrue();
        Map<String, Object> json = JSON.readValue(ProbeJson.write(result), LinkedHashMap.class);
        assertThat(json).containsEntry("observed", null).containsEntry("protocol", "SCTP");
        assertThat(json.keySet())
                .containsExactly("port", "protocol", "pods", "expected", "observed", "unsupported", "mismatches");
        assertThat(TableRenderer.render(result)).contains("80/SCTP: not probed");
    }

    @Test
    void differentPodSetsAreAnErrorNotAMatch() {
        Map<String, Map<String, Outcome>> o = Map.of("x/a", Map.of("x/a", Outcome.CONNECTED));
        ObservedMatrix one = new ObservedMatrix(ServePort.parse("80/TCP"), List.of("x/a"), o);
        assertThatThrownBy(() -> ProbeResult.compare(expected(Protocol.TCP, true), one))
                .hasMessageContaining("not the pods the sandbox runs");
    }

    @Test
    void probePortsParseIntoTheProtoEnum() {
        assertThat(ServePort.parse("53/udp")).isEqualTo(new ServePort(53, Protocol.UDP));
        assertThat(ServePort.parse("80").protocol().getNumber()).isEqualTo(6);
        assertThatThrownBy(() -> ServePort.parse("80/ICMP")).hasMessageContaining("TCP, UDP or SCTP");
        assertThatThrownBy(() -> new ServePort(80, Protocol.PROTOCOL_UNSPECIFIED))
                .hasMessageContaining("TCP, UDP or SCTP");
    }
}
