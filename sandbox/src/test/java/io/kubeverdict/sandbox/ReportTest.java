package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.testbed.ObservedMatrix;
import io.kubeverdict.testbed.Outcome;
import io.kubeverdict.testbed.ServePort;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Comparing expected with observed, and the two output forms. */
class ReportTest {
    private static final String MATRIX = """
            {"port":80,"protocol":"TCP","pods":["x/a","x/b"],
             "allowed":{"x/a":{"x/a":true,"x/b":false},"x/b":{"x/a":true,"x/b":true}}}
            """;

    private static ObservedMatrix observed(String protocol, Outcome aa, Outcome ab, Outcome ba, Outcome bb) {
        Map<String, Map<String, Outcome>> o = new LinkedHashMap<>();
        o.put("x/a", new LinkedHashMap<>(Map.of("x/a", aa, "x/b", ab)));
        o.put("x/b", new LinkedHashMap<>(Map.of("x/a", ba, "x/b", bb)));
        return new ObservedMatrix(ServePort.parse("80/" + protocol), List.of("x/a", "x/b"), o);
    }

    @Test
    void namesEveryMismatchingPairInJsonAndTable() {
        ExpectedMatrix expected = ExpectedMatrix.parse(MATRIX);
        ProbeResult result = ProbeResult.compare(expected,
                observed("TCP", Outcome.CONNECTED, Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED));
        assertThat(result.agrees()).isFalse();
        assertThat(result.mismatches()).containsExactly(List.of("x/a", "x/b"), List.of("x/b", "x/a"));

        String json = Json.write(result.toJson());
        assertThat(json).startsWith("{\"port\":80,\"protocol\":\"TCP\",\"pods\":[\"x/a\",\"x/b\"],\"expected\":{")
                .endsWith("\"mismatches\":[[\"x/a\",\"x/b\"],[\"x/b\",\"x/a\"]]}");
        @SuppressWarnings("unchecked")
        Map<String, Object> back = (Map<String, Object>) Json.parse(json);
        assertThat(back).containsOnlyKeys("port", "protocol", "pods", "expected", "observed", "mismatches");
        assertThat(back.get("observed")).isEqualTo(Map.of("x/a", Map.of("x/a", true, "x/b", true),
                "x/b", Map.of("x/a", false, "x/b", true)));

        String table = TableRenderer.render(result);
        assertThat(table).contains("2 of 2 pairs differ")
                .contains("MISMATCH x/a -> x/b: expected denied, observed CONNECTED")
                .contains("MISMATCH x/b -> x/a: expected allowed, observed TIMEOUT");
    }

    @Test
    void agreementHasNoMismatches() {
        ProbeResult result = ProbeResult.compare(ExpectedMatrix.parse(MATRIX),
                observed("TCP", Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED, Outcome.CONNECTED));
        assertThat(result.agrees()).isTrue();
        assertThat(TableRenderer.render(result)).contains("observed == expected (2 pairs)");
    }

    @Test
    void loopbackIsShownButNotCompared() {
        // Under a deny-all the engine says x/a -> x/a is denied, but that connection never leaves the pod.
        ExpectedMatrix expected = ExpectedMatrix.parse(MATRIX.replace("\"x/a\":{\"x/a\":true", "\"x/a\":{\"x/a\":false"));
        assertThat(expected.allowed("x/a", "x/a")).isFalse();
        ProbeResult result = ProbeResult.compare(expected,
                observed("TCP", Outcome.CONNECTED, Outcome.TIMEOUT, Outcome.CONNECTED, Outcome.CONNECTED));
        assertThat(result.agrees()).isTrue();
        assertThat(TableRenderer.render(result)).doesNotContain("!").contains("loopback");
    }

    @Test
    void sctpIsReportedUnsupportedNotCompared() {
        ExpectedMatrix expected = ExpectedMatrix.parse(MATRIX.replace("TCP", "SCTP"));
        ProbeResult result = ProbeResult.compare(expected,
                observed("SCTP", Outcome.UNSUPPORTED, Outcome.UNSUPPORTED, Outcome.UNSUPPORTED, Outcome.UNSUPPORTED));
        assertThat(result.unsupported()).isTrue();
        assertThat(result.agrees()).isTrue();
        assertThat(result.toJson()).containsEntry("observed", null).containsKey("unsupported");
        assertThat(TableRenderer.render(result)).contains("not probed");
    }

    @Test
    void differentPodSetsAreAnErrorNotAMatch() {
        Map<String, Map<String, Outcome>> o = Map.of("x/a", Map.of("x/a", Outcome.CONNECTED));
        ObservedMatrix one = new ObservedMatrix(ServePort.parse("80/TCP"), List.of("x/a"), o);
        assertThatThrownBy(() -> ProbeResult.compare(ExpectedMatrix.parse(MATRIX), one))
                .hasMessageContaining("not the pods the sandbox runs");
    }

    @Test
    void jsonRoundTripsEscapesAndNumbers() {
        Object parsed = Json.parse("{\"a\":[1,2.5,-3e2,true,false,null,\"q\\\"\\u0041\\n\"],\"b\":{}}");
        assertThat(Json.write(parsed)).isEqualTo("{\"a\":[1,2.5,-300.0,true,false,null,\"q\\\"A\\n\"],\"b\":{}}");
        assertThatThrownBy(() -> Json.parse("{\"a\":1} x")).hasMessageContaining("trailing");
    }
}
