// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Timestamp;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.opentelemetry.api.common.Attributes;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Staged flips in the flow history: their own records, kept through the file's form, filtered, exported. */
class StagedFlowsTest {
    private static final long T = 1_800_000_000_000L;

    private static final StagedVerdict WOULD_DENY = StagedVerdict.newBuilder()
            .setVerdict(Verdict.VERDICT_DENY)
            .setStagedPolicy(PolicyId.newBuilder().setTier("default").setName("x/deny-all"))
            .setDirection("ingress")
            .setReason("denied by default/staged:x/deny-all (tier default)")
            .build();

    /** An allowed x/a -> x/b:80 verdict, with the staged policies' would-be verdict when given. */
    private static VerdictEvent event(StagedVerdict staged) {
        Explanation.Builder x = Explanation.newBuilder()
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setSource(EndpointId.newBuilder().setNamespace("x").setPod("a"))
                .setDestination(EndpointId.newBuilder().setNamespace("x").setPod("b"))
                .setTuple(Tuple.newBuilder()
                        .setSrcIp("10.0.0.1")
                        .setDstIp("10.0.0.2")
                        .setProtocol(6)
                        .setDstPort(80))
                .setIngress(DirectionExplanation.newBuilder()
                        .setEvaluated(true)
                        .setVerdict(Verdict.VERDICT_ALLOW)
                        .setReason("not isolated"));
        if (staged != null) {
            x.setStaged(staged);
        }
        return VerdictEvent.newBuilder()
                .setNode("n1")
                .setTime(Timestamp.newBuilder().setSeconds(T / 1000))
                .setExplanation(x)
                .build();
    }

    private static FlowHistory history() {
        return new FlowHistory(new FlowHistory.Limits(Duration.ofMinutes(10), Duration.ofMinutes(1), 100, 1 << 20));
    }

    @Test
    void aStagedFlipIsItsOwnRecordKeptThroughTheProtoAndFilteredByStaged() {
        FlowHistory h = history();
        for (VerdictEvent e : List.of(event(null), event(WOULD_DENY), event(WOULD_DENY))) {
            h.record(FlowEvents.observation(e, pod -> Map.of()).orElseThrow(), T);
        }
        assertThat(h.held())
                .extracting(held -> held.key().stagedFlip(), FlowHistory.Held::count)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(false, 1L), org.assertj.core.groups.Tuple.tuple(true, 2L));

        FlowHistory.Held flip = h.held().stream()
                .filter(held -> held.key().stagedFlip())
                .findFirst()
                .orElseThrow();
        FlowRecord record = FlowProtos.toProto(flip, true);
        assertThat(record.getStaged()).isEqualTo(WOULD_DENY);
        assertThat(FlowProtos.fromProto(record).key())
                .as("the history file keeps the flip")
                .isEqualTo(flip.key());

        List<FlowRecord> staged = FlowQueries.answer(
                        h, ListFlowsRequest.newBuilder().setStaged(true).build())
                .getFlowsList();
        assertThat(staged).singleElement().satisfies(r -> {
            assertThat(r.getCount()).isEqualTo(2);
            assertThat(r.getStaged().getStagedPolicy().getName()).isEqualTo("x/deny-all");
        });
        assertThat(FlowQueries.answer(h, ListFlowsRequest.getDefaultInstance()).getFlowsList())
                .hasSize(2);
    }

    @Test
    void anExportedFlipNamesTheWouldBeVerdictAndTheStagedPolicy() {
        FlowHistory h = history();
        h.record(FlowEvents.observation(event(WOULD_DENY), pod -> Map.of()).orElseThrow(), T);
        h.record(FlowEvents.observation(event(null), pod -> Map.of()).orElseThrow(), T);
        Map<Boolean, Attributes> byFlip = new HashMap<>();
        for (FlowHistory.Held held : h.held()) {
            byFlip.put(held.key().stagedFlip(), FlowLogAttributes.of(held));
        }
        assertThat(byFlip.get(true).get(FlowLogAttributes.STAGED_VERDICT)).isEqualTo("denied");
        assertThat(byFlip.get(true).get(FlowLogAttributes.STAGED_POLICY)).isEqualTo("x/deny-all");
        assertThat(byFlip.get(true).get(FlowLogAttributes.VERDICT)).isEqualTo("allowed");
        assertThat(byFlip.get(false).get(FlowLogAttributes.STAGED_VERDICT)).isNull();
    }
}
