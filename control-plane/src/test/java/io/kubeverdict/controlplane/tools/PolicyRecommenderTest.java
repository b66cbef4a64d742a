// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Verdict;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PolicyRecommenderTest {
    private static final Map<String, String> WEB = Map.of("app", "web", "pod-template-hash", "7d4b9c5f6");
    private static final PodModel WEB_POD = new PodModel(
            "shop",
            "web-7d4b9c5f6-x2x9z",
            WEB,
            "n1",
            List.of("10.0.0.5"),
            true,
            List.of(new PodModel.NamedPort("http", Protocol.TCP, 8080)),
            "shop/web-7d4b9c5f6-x2x9z");

    private static FlowSide pod(String ns, String workload, Map<String, String> labels) {
        return FlowSide.newBuilder()
                .setNamespace(ns)
                .setWorkload(workload)
                .putAllLabels(labels)
                .build();
    }

    private static FlowSide outside(String ip) {
        return FlowSide.newBuilder().setAddress(ip).build();
    }

    private static FlowRecord flow(FlowSide from, FlowSide to, int protocol, int port, Verdict v) {
        return FlowRecord.newBuilder()
                .setSource(from)
                .setDestination(to)
                .setProtocol(protocol)
                .setPort(port)
                .setVerdict(v)
                .setCount(1)
                .build();
    }

    private static PolicyRecommender.Recommendation recommend(List<FlowRecord> flows, List<PodModel> endpoints) {
        return PolicyRecommender.recommend(
                "shop",
                flows,
                s -> s.getWorkload().equals("web") ? Optional.of(WEB_POD) : Optional.empty(),
                endpoints,
                true);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> spec(Map<String, Object> policy) {
        return (Map<String, Object>) policy.get("spec");
    }

    @Test
    void theWorkloadIsSelectedByItsStableLabelsOnly() {
        var r = recommend(
                List.of(flow(
                        pod("shop", "client", Map.of("app", "client")),
                        pod("shop", "web", WEB),
                        6,
                        8080,
                        Verdict.VERDICT_ALLOW)),
                List.of());
        Map<String, Object> web = r.policies().stream()
                .filter(p -> p.toString().contains("recommended-web"))
                .findFirst()
                .orElseThrow();
        assertThat(spec(web).get("podSelector")).isEqualTo(Map.of("matchLabels", Map.of("app", "web")));
        assertThat(web.toString()).doesNotContain("pod-template-hash");
        assertThat(spec(web).get("policyTypes")).isEqualTo(List.of("Ingress", "Egress"));
    }

    @Test
    void aPortThePodNamesIsWrittenByNameAnotherByNumber() {
        var r = recommend(
                List.of(
                        flow(
                                pod("shop", "client", Map.of("app", "client")),
                                pod("shop", "web", WEB),
                                6,
                                8080,
                                Verdict.VERDICT_ALLOW),
                        flow(
                                pod("shop", "client", Map.of("app", "client")),
                                pod("shop", "web", WEB),
                                6,
                                9090,
                                Verdict.VERDICT_ALLOW),
                        flow(
                                pod("shop", "client", Map.of("app", "client")),
                                pod("shop", "web", WEB),
                                17,
                                8080,
                                Verdict.VERDICT_ALLOW)),
                List.of());
        String text = r.policies().toString();
        assertThat(text)
                .contains("{protocol=TCP, port=http}", "{protocol=TCP, port=9090}", "{protocol=UDP, port=8080}");
    }

    @Test
    void onlyAddressesOutsideTheClusterBecomeCidrs() {
        var r = recommend(
                List.of(
                        flow(pod("shop", "web", WEB), outside("203.0.113.7"), 6, 443, Verdict.VERDICT_ALLOW),
                        flow(pod("shop", "web", WEB), outside("2001:db8::1"), 6, 443, Verdict.VERDICT_ALLOW),
                        flow(
                                pod("shop", "web", WEB),
                                pod("db", "pg", Map.of("app", "pg")),
                                6,
                                5432,
                                Verdict.VERDICT_ALLOW)),
                List.of());
        String text = r.policies().toString();
        assertThat(text).contains("cidr=203.0.113.7/32", "cidr=2001:db8::1/128");
        assertThat(text).contains("namespaceSelector={matchLabels={kubernetes.io/metadata.name=db}}");
        assertThat(text).doesNotContain("10.0.0.5");
    }

    @Test
    void deniedFlowsAllowNothingAndUnseenWorkloadsAreIsolated() {
        PodModel idle = new PodModel(
                "shop", "idle", Map.of("app", "idle"), "n1", List.of("10.0.0.9"), true, List.of(), "shop/idle");
        var r = recommend(
                List.of(flow(
                        pod("other", "x", Map.of("app", "x")), pod("shop", "web", WEB), 6, 80, Verdict.VERDICT_DENY)),
                List.of(idle));
        assertThat(r.policies()).hasSize(1);
        Map<String, Object> spec = spec(r.policies().get(0));
        assertThat(spec.get("podSelector")).isEqualTo(Map.of("matchLabels", Map.of("app", "idle")));
        assertThat(spec.get("ingress")).isEqualTo(List.of());
        assertThat(spec.get("egress")).isEqualTo(List.of());
    }

    @Test
    void whatCannotBeExpressedIsANoteNotAWiderRule() {
        var r = recommend(
                List.of(
                        flow(pod("shop", "web", WEB), outside("203.0.113.7"), 1, 0, Verdict.VERDICT_ALLOW),
                        flow(pod("shop", "bare", Map.of()), pod("shop", "web", WEB), 6, 80, Verdict.VERDICT_ALLOW)),
                List.of());
        assertThat(r.notes()).anyMatch(n -> n.contains("protocol 1"));
        assertThat(r.notes()).anyMatch(n -> n.contains("no policy for workload shop/bare"));
        assertThat(r.policies().toString()).doesNotContain("203.0.113.7");
    }
}
