// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeStatus;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/** The pieces every command's output is made of, table-driven. */
class OutputFormatsTest {
    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

    private static ListNodesResponse cluster() {
        return ListNodesResponse.newBuilder()
                .addNodes(NodeStatus.newBuilder()
                        .setNode("node-1")
                        .setConnected(true)
                        .setInSync(true)
                        .setAgentVersion("0.1.0")
                        .setSentSequence(12)
                        .setAppliedSequence(12)
                        .setProgrammingLatencyP50(Durations.fromMillis(42))
                        .setProgrammingLatencyP99(Durations.fromMillis(1500))
                        .setProgrammingLatencySamples(9)
                        .setAgentStartTime(Timestamps.fromMillis(
                                NOW.minus(Duration.ofHours(3).plusMinutes(12)).toEpochMilli()))
                        .setLastContact(
                                Timestamps.fromMillis(NOW.minusSeconds(4).toEpochMilli())))
                .addNodes(NodeStatus.newBuilder()
                        .setNode("node-22")
                        .setConnected(true)
                        .setInSync(true)
                        .setAgentVersion("0.1.0")
                        .setSentSequence(130)
                        .setAppliedSequence(127)
                        .setLag(3)
                        .setLastContact(
                                Timestamps.fromMillis(NOW.minusSeconds(75).toEpochMilli())))
                .addNodes(NodeStatus.newBuilder().setNode("node-3"))
                .build();
    }

    @Test
    void statusTableHasAlignedColumnsAndOneStateWordPerNode() {
        assertThat(StatusCommand.table(cluster(), NOW)).isEqualTo("""
                NODE      STATE          APPLIED/SENT   LAG   P50    P99    VERSION   UPTIME   LAST CONTACT
                node-1    in-sync        12/12          0     42ms   1.5s   0.1.0     3h12m    4.0s ago
                node-22   behind         127/130        3     -      -      0.1.0     -        1m15s ago
                node-3    disconnected   -              -     -      -      -         -        -
                """);
    }

    @ParameterizedTest
    @CsvSource({"json", "yaml"})
    void machineFormatsCarryTheProtoFieldsAndAgree(String format) {
        String text = Rendering.machine(OutputFormat.valueOf(format), cluster());
        JsonNode tree = format.equals("json")
                ? JsonMapper.builder().build().readTree(text)
                : YAMLMapper.builder().build().readTree(text);
        assertThat(tree).isEqualTo(JsonMapper.builder().build().readTree(Rendering.json(cluster())));
        assertThat(tree.get("nodes").get(0).get("programmingLatencyP99").asText())
                .isEqualTo("1.500s");
        assertThat(tree.get("nodes").get(0).get("lastContact").asText()).isEqualTo("2026-12-01T11:59:56Z");
        assertThat(text).endsWith("\n").doesNotStartWith("---");
    }

    @ParameterizedTest
    @CsvSource({"80,6,80/TCP", "53,17,53/UDP", "9000,132,9000/SCTP", "0,1,ICMP", "0,58,ICMPv6", "0,47,proto 47"})
    void oneSpellingOfPortAndProtocol(int port, int protocol, String expected) {
        assertThat(PortProtocol.format(port, protocol)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"tcp,6", "UDP,17", "Sctp,132", "icmp,1", "ICMPv6,58", "47,47", "256,-1", "http,-1"})
    void protocolsParseByNameOrNumber(String text, int expected) {
        assertThat(PortProtocol.parse(text)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({
        "PT0.0008S,800us",
        "PT0.042S,42ms",
        "PT1.5S,1.5s",
        "PT42S,42s",
        "PT4M12S,4m12s",
        "PT3H5M,3h5m",
        "PT52H,2d4h",
        "PT-1S,0us"
    })
    void compactDurations(Duration d, String expected) {
        assertThat(io.kubeverdict.controlplane.cli.Durations.compact(d)).isEqualTo(expected);
    }

    @Test
    void outputOptionSpellings() {
        OutputFormat.Converter c = new OutputFormat.Converter();
        assertThat(c.convert("JSON")).isEqualTo(OutputFormat.json);
        assertThat(c.convert("text")).as("explain's old spelling").isEqualTo(OutputFormat.table);
        assertThat(c.convert("wide")).isEqualTo(OutputFormat.wide);
        assertThat(OutputFormat.wide.isTable()).isTrue();
        assertThatThrownBy(() -> c.convert("xml")).hasMessageContaining("table, wide, json or yaml");
    }
}
