// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Timestamp;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** observe's own filters, its verdict words and its order of several agents' events. */
class ObserveFilterTest {
    private static final Explanation Y_TO_X = Explanation.newBuilder()
            .setTuple(Tuple.newBuilder()
                    .setSrcIp("10.0.0.2")
                    .setDstIp("10.0.0.1")
                    .setProtocol(6)
                    .setDstPort(80))
            .setSource(EndpointId.newBuilder().setNamespace("y").setPod("client"))
            .setDestination(EndpointId.newBuilder().setNamespace("x").setPod("web"))
            .setVerdict(Verdict.VERDICT_DENY)
            .setIngress(DirectionExplanation.newBuilder()
                    .setEvaluated(true)
                    .setIsolated(true)
                    .setVerdict(Verdict.VERDICT_DENY)
                    .setPolicy(PolicyId.newBuilder().setName("x/deny-web")))
            .build();

    private static ObserveFilter filter(
            String from, String to, int port, int protocol, String policy, Map<String, String> labels) {
        return new ObserveFilter(
                from,
                to,
                port,
                -1,
                protocol,
                policy,
                labels,
                pod -> pod.equals("x/web") ? Map.of("app", "web", "tier", "front") : Map.of("app", "client"));
    }

    @Test
    void eachFilterKeepsWhatItNamesAndDropsTheRest() {
        assertThat(filter("", "", -1, -1, "", Map.of()).matches(Y_TO_X)).isTrue();
        assertThat(filter("y/client", "x/web", 80, 6, "x/deny-web", Map.of("app", "web"))
                        .matches(Y_TO_X))
                .isTrue();
        assertThat(filter("x/web", "", -1, -1, "", Map.of()).matches(Y_TO_X))
                .as("from is the source")
                .isFalse();
        assertThat(filter("", "y/client", -1, -1, "", Map.of()).matches(Y_TO_X)).isFalse();
        assertThat(filter("", "", 81, -1, "", Map.of()).matches(Y_TO_X)).isFalse();
        assertThat(filter("", "", -1, 17, "", Map.of()).matches(Y_TO_X)).isFalse();
        assertThat(filter("", "", -1, -1, "x/other", Map.of()).matches(Y_TO_X)).isFalse();
        assertThat(filter("", "", -1, -1, "", Map.of("app", "db")).matches(Y_TO_X))
                .isFalse();
        assertThat(filter("", "", -1, -1, "", Map.of("app", "web", "tier", "front"))
                        .matches(Y_TO_X))
                .as("all labels on one side")
                .isTrue();
        assertThat(filter("", "", -1, -1, "", Map.of("app", "client", "tier", "front"))
                        .matches(Y_TO_X))
                .as("not split over both sides")
                .isFalse();
    }

    @Test
    void fromPortKeepsOnlyThatSourcePortAndTheTableShowsIt() {
        Explanation fromPort = Y_TO_X.toBuilder()
                .setTuple(Y_TO_X.getTuple().toBuilder().setSrcPort(43512))
                .build();
        ObserveFilter only43512 = new ObserveFilter("", "", -1, 43512, -1, "", Map.of(), pod -> Map.of());
        assertThat(only43512.matches(fromPort)).isTrue();
        assertThat(only43512.matches(Y_TO_X)).as("no source port known").isFalse();
        assertThat(filter("", "", -1, -1, "", Map.of()).matches(fromPort)).isTrue();

        String row = ObserveCommand.row(
                VerdictEvent.newBuilder()
                        .setNode("node-1")
                        .setTime(Timestamp.newBuilder().setSeconds(3600))
                        .setExplanation(fromPort)
                        .build(),
                ZoneOffset.UTC);
        assertThat(row).contains("y/client (10.0.0.2:43512)", "x/web (10.0.0.1)", "80/TCP");
        assertThat(ObserveCommand.withPort("fd00::1", 443)).isEqualTo("[fd00::1]:443");
        assertThat(ObserveCommand.withPort("10.0.0.2", 0)).isEqualTo("10.0.0.2");
    }

    @Test
    void aPodsLabelsAreAskedOncePerRun() {
        AtomicInteger asked = new AtomicInteger();
        ObserveFilter f = new ObserveFilter("", "", -1, -1, -1, "", Map.of("app", "web"), pod -> {
            asked.incrementAndGet();
            return Map.of();
        });
        for (int i = 0; i < 5; i++) {
            f.matches(Y_TO_X);
        }
        assertThat(asked).hasValue(2); // source and destination, once each
    }

    @Test
    void theTableSaysAllowedOrDeniedAndTheDirectionThatDecided() {
        VerdictEvent e = VerdictEvent.newBuilder()
                .setNode("node-1")
                .setTime(Timestamp.newBuilder().setSeconds(3600))
                .setExplanation(Y_TO_X)
                .build();
        String row = ObserveCommand.row(e, ZoneOffset.UTC);
        assertThat(row).contains("ingress", "denied", "x/deny-web").doesNotContain("DENY");
        assertThat(VerdictWords.parse("Allowed")).isEqualTo(Verdict.VERDICT_ALLOW);
        for (String alias : List.of("denied", "DENY", "drop", "VERDICT_DENY")) {
            assertThat(VerdictWords.parse(alias)).as(alias).isEqualTo(Verdict.VERDICT_DENY);
        }
        assertThat(VerdictWords.parse("accept")).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(VerdictWords.parse("maybe")).isNull();
    }

    @Test
    void eventsOfSeveralAgentsLeaveInTheOrderTheyWereDecided() {
        TimeOrder order = new TimeOrder(300);
        order.add(at("node-2", 20), 0); // arrived first, decided later
        order.add(at("node-1", 10), 100);
        assertThat(order.due(250)).as("held").isEmpty();
        assertThat(order.nanosUntilNext(250)).isEqualTo(150);
        assertThat(order.due(400)).extracting(v -> v.getEvent().getNode()).containsExactly("node-1", "node-2");
        order.add(at("node-1", 30), 500);
        assertThat(order.drain()).hasSize(1);
        assertThat(order.nanosUntilNext(0)).isEqualTo(Long.MAX_VALUE);
    }

    private static ObservedVerdict at(String node, long seconds) {
        return ObservedVerdict.newBuilder()
                .setEvent(VerdictEvent.newBuilder()
                        .setNode(node)
                        .setTime(Timestamp.newBuilder().setSeconds(seconds))
                        .setExplanation(Y_TO_X))
                .build();
    }
}
