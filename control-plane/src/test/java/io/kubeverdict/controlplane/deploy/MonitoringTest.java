// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testing.tools.Promtool;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * deploy/components/monitoring: the alert rules and the dashboard's queries are PromQL that
 * promtool accepts, the alerts fire when their unit tests say, every metric they name is one the
 * processes export, and the monitors scrape the ports the workloads have.
 */
class MonitoringTest {
    private static final Pattern METRIC = Pattern.compile("\\bkubeverdict_[a-z0-9_]+");
    private static final Pattern CODE_METRIC = Pattern.compile("\"(kubeverdict_[a-z0-9_]+)\"");

    @TempDir
    Path work;

    @Test
    void alertRulesPassPromtoolCheck() throws IOException {
        ObjectNode spec = ruleSpec();
        Files.writeString(work.resolve("rules.yaml"), Kustomize.YAML.writeValueAsString(spec));
        Promtool.Result check = Promtool.require().run(work, "check", "rules", "rules.yaml");
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + alertNames(spec).size() + " rules found");
    }

    @Test
    void alertsFireWhenAndWhereTheirUnitTestsSay() throws IOException {
        ObjectNode spec = ruleSpec();
        for (JsonNode group : spec.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                ((ObjectNode) rule).remove("annotations");
            }
        }
        Files.writeString(work.resolve("kube-verdict-rules.yaml"), Kustomize.YAML.writeValueAsString(spec));
        String tests;
        try (InputStream in = MonitoringTest.class.getResourceAsStream("alerts-test.yaml")) {
            tests = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        Files.writeString(work.resolve("alerts-test.yaml"), tests);
        for (String alert : alertNames(spec)) {
            assertThat(tests).as("alerts-test.yaml tests " + alert).contains("alertname: " + alert + "\n");
        }
        Promtool.Result test = Promtool.require().run(work, "test", "rules", "alerts-test.yaml");
        assertThat(test.exitCode()).as(test.output()).isZero();
    }

    @Test
    void dashboardQueriesArePromQL() throws IOException {
        List<Map<String, String>> records = new ArrayList<>();
        for (JsonNode panel : panels()) {
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asString().replaceAll("\\$__(rate_interval|interval|range)", "5m");
                records.add(Map.of(
                        "record",
                        "dashboard:panel_" + panel.path("id").asInt() + "_"
                                + target.path("refId").asString(),
                        "expr",
                        expr));
            }
        }
        assertThat(records).hasSizeGreaterThan(10);
        Files.writeString(
                work.resolve("dashboard.yaml"),
                Kustomize.YAML.writeValueAsString(
                        Map.of("groups", List.of(Map.of("name", "dashboard", "rules", records)))));
        Promtool.Result check = Promtool.require().run(work, "check", "rules", "dashboard.yaml");
        assertThat(check.exitCode()).as(check.output()).isZero();
    }

    @Test
    void dashboardIsGrafanaJsonWithAQueryPerPanelOnTheChosenDataSource() throws IOException {
        JsonNode dashboard = dashboard();
        assertThat(dashboard.path("uid").asString()).isEqualTo("kube-verdict");
        assertThat(dashboard.path("templating").path("list")).anySatisfy(v -> {
            assertThat(v.path("name").asString()).isEqualTo("datasource");
            assertThat(v.path("query").asString()).isEqualTo("prometheus");
        });
        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : panels()) {
            assertThat(ids.add(panel.path("id").asInt()))
                    .as("unique panel id " + panel.path("id"))
                    .isTrue();
            assertThat(panel.path("gridPos").path("w").asInt()).isBetween(1, 24);
            if (panel.path("type").asString().equals("row")) {
                continue;
            }
            assertThat(panel.path("datasource").path("uid").asString())
                    .as(panel.path("title").asString())
                    .isEqualTo("${datasource}");
            assertThat(panel.path("targets"))
                    .as(panel.path("title").asString())
                    .isNotEmpty()
                    .allSatisfy(t -> assertThat(t.path("expr").asString()).contains("kubeverdict_"));
        }
    }

    @Test
    void everyMetricTheAlertsAndDashboardNameIsDocumentedAndRegistered() throws IOException {
        Set<String> named = new TreeSet<>();
        for (JsonNode group : ruleSpec().path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                named.addAll(metrics(rule.path("expr").asString()));
            }
        }
        for (JsonNode panel : panels()) {
            for (JsonNode target : panel.path("targets")) {
                named.addAll(metrics(target.path("expr").asString()));
            }
        }
        assertThat(named)
                .contains(
                        "kubeverdict_sync_in_sync",
                        "kubeverdict_node_lag_messages",
                        "kubeverdict_programming_latency_seconds",
                        "kubeverdict_queue_dropped_total",
                        "kubeverdict_queue_user_dropped_total",
                        "kubeverdict_policy_problems");
        Set<String> documented = documentedMetrics();
        Set<String> registered = registeredMeterNames();
        for (String metric : named) {
            assertThat(documented)
                    .as(metric + " in docs/operations.md, \"## Metrics\"")
                    .contains(metric);
            String meter = metric.replaceFirst("_total$", "").replaceFirst("_seconds$", "");
            assertThat(registered)
                    .as(metric + ": a meter registered in */src/main/java")
                    .containsAnyOf(metric, meter);
        }
    }

    @Test
    void monitorsScrapeTheMetricsPortsOfTheWorkloads() throws IOException {
        List<ObjectNode> objects = Kustomize.build(DeployManifests.deployDir().resolve("overlays/monitoring"));
        ObjectNode service = object(objects, "Service", "kube-verdict-control-plane");
        ObjectNode serviceMonitor = object(objects, "ServiceMonitor", "kube-verdict-control-plane");
        assertThat(labels(service.path("metadata")))
                .containsAllEntriesOf(labels(serviceMonitor.path("spec").path("selector")));
        assertThat(names(service.path("spec").path("ports")))
                .contains(serviceMonitor
                        .path("spec")
                        .path("endpoints")
                        .get(0)
                        .path("port")
                        .asString());

        ObjectNode agent = object(objects, "DaemonSet", "kube-verdict-agent");
        ObjectNode podMonitor = object(objects, "PodMonitor", "kube-verdict-agent");
        JsonNode pod = agent.path("spec").path("template");
        assertThat(labels(pod.path("metadata")))
                .containsAllEntriesOf(labels(podMonitor.path("spec").path("selector")));
        assertThat(names(pod.path("spec").path("containers").get(0).path("ports")))
                .contains(podMonitor
                        .path("spec")
                        .path("podMetricsEndpoints")
                        .get(0)
                        .path("port")
                        .asString());

        for (ObjectNode monitor :
                List.of(serviceMonitor, podMonitor, object(objects, "PrometheusRule", "kube-verdict"))) {
            assertThat(monitor.path("metadata").path("namespace").asString()).isEqualTo("kube-verdict");
        }
        ObjectNode dashboard = object(objects, "ConfigMap", "kube-verdict-dashboard");
        assertThat(labels(dashboard.path("metadata"))).containsEntry("grafana_dashboard", "1");
        assertThat(JsonMapper.builder()
                        .build()
                        .readTree(
                                dashboard.path("data").path("kube-verdict.json").asString()))
                .isEqualTo(dashboard());
    }

    @Test
    void theHelmChartCarriesTheComponentsRulesAndDashboard() throws IOException {
        Path files = HelmChart.dir().resolve("files");
        assertThat(Files.readString(files.resolve("dashboard.json")))
                .as("copy " + component().resolve("dashboard.json") + " to " + files)
                .isEqualTo(Files.readString(component().resolve("dashboard.json")));
        assertThat(Kustomize.YAML.readTree(
                        files.resolve("prometheus-rules.yaml").toFile()))
                .as("copy the spec of " + component().resolve("prometheus-rule.yaml") + " to " + files)
                .isEqualTo(ruleSpec());
    }

    private static ObjectNode ruleSpec() {
        List<ObjectNode> rules = Kustomize.documents(component().resolve("prometheus-rule.yaml"));
        return (ObjectNode)
                object(rules, "PrometheusRule", "kube-verdict").get("spec").deepCopy();
    }

    private static List<String> alertNames(JsonNode spec) {
        List<String> names = new ArrayList<>();
        spec.path("groups")
                .forEach(g ->
                        g.path("rules").forEach(r -> names.add(r.path("alert").asString())));
        return names;
    }

    private static JsonNode dashboard() throws IOException {
        return JsonMapper.builder()
                .build()
                .readTree(Files.readString(component().resolve("dashboard.json")));
    }

    /** Every panel, rows' nested panels included. */
    private static List<JsonNode> panels() throws IOException {
        List<JsonNode> panels = new ArrayList<>();
        for (JsonNode panel : dashboard().path("panels")) {
            panels.add(panel);
            panel.path("panels").forEach(panels::add);
        }
        return panels;
    }

    private static Path component() {
        return DeployManifests.deployDir().resolve("components/monitoring");
    }

    /** Metric names in a PromQL expression; histogram series resolve to their histogram. */
    private static Set<String> metrics(String expr) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            names.add(m.group().replaceFirst("_(bucket|count|sum)$", ""));
        }
        return names;
    }

    /** The metric names the metrics reference of docs/operations.md lists. */
    private static Set<String> documentedMetrics() throws IOException {
        String docs = Files.readString(DeployManifests.deployDir().resolveSibling("docs/operations.md"));
        int start = docs.indexOf("\n## Metrics");
        assertThat(start).as("docs/operations.md has a \"## Metrics\" section").isNotNegative();
        int end = docs.indexOf("\n## ", start + 1);
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(docs.substring(start, end < 0 ? docs.length() : end));
        while (m.find()) {
            names.add(m.group());
        }
        return names;
    }

    @Test
    void countersAreDocumentedAsPrometheusExposesThemWithTotal() throws IOException {
        // Micrometer's Prometheus registry adds _total to every counter's name: a counter documented
        // without it names a series that does not exist (a dashboard or alert written from the docs
        // would stay empty).
        Pattern counter = Pattern.compile("(?:FunctionCounter|Counter)\\.builder\\(\\s*\"(kubeverdict_[a-z0-9_]+)\"");
        Set<String> counters = new TreeSet<>();
        Path root = DeployManifests.deployDir().getParent();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().contains("/src/main/java/")
                            && !p.toString().contains("/target/"))
                    .toList()) {
                Matcher m = counter.matcher(Files.readString(file));
                while (m.find()) {
                    counters.add(m.group(1).replaceFirst("_total$", ""));
                }
            }
        }
        assertThat(counters).contains("kubeverdict_dns_responses", "kubeverdict_dns_answers");
        Set<String> documented = documentedMetrics();
        for (String c : counters) {
            assertThat(documented).as(c + " (a counter) in docs/operations.md").doesNotContain(c);
        }
    }

    /** Meter names written as string literals in the production code of every module. */
    private static Set<String> registeredMeterNames() throws IOException {
        Set<String> names = new TreeSet<>();
        Path root = DeployManifests.deployDir().getParent();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().contains("/src/main/java/"))
                    .filter(p ->
                            !p.toString().contains("/target/") && !p.toString().contains("/node_modules/"))
                    .toList()) {
                Matcher m = CODE_METRIC.matcher(Files.readString(file));
                while (m.find()) {
                    names.add(m.group(1));
                }
            }
        }
        assertThat(names).as("meter names found in */src/main/java").isNotEmpty();
        return names;
    }

    private static ObjectNode object(List<ObjectNode> objects, String kind, String name) {
        return objects.stream()
                .filter(o -> o.path("kind").asString().equals(kind)
                        && o.path("metadata").path("name").asString().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + "/" + name));
    }

    private static Map<String, String> labels(JsonNode metadataOrSelector) {
        JsonNode labels = metadataOrSelector.has("matchLabels")
                ? metadataOrSelector.get("matchLabels")
                : metadataOrSelector.path("labels");
        Map<String, String> map = new java.util.TreeMap<>();
        labels.properties().forEach(e -> map.put(e.getKey(), e.getValue().asString()));
        assertThat(map).as("labels of " + metadataOrSelector).isNotEmpty();
        return map;
    }

    private static List<String> names(JsonNode ports) {
        List<String> names = new ArrayList<>();
        ports.forEach(p -> names.add(p.path("name").asString()));
        return names;
    }
}
