// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** deploy/examples/admin-tiers does what its README says, through the commands a user runs. */
class AdminTiersExampleTest {
    private static final String EXAMPLE = "../deploy/examples/admin-tiers";

    record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Boolean>> matrix(String protocol, int port) {
        Run r = run(
                "matrix",
                "--manifests",
                EXAMPLE,
                "--protocol",
                protocol,
                "--port",
                String.valueOf(port),
                "--output",
                "json");
        assertThat(r.exit()).isZero();
        assertThat(r.err()).doesNotContain("warning");
        return (Map<String, Map<String, Boolean>>)
                new KubernetesSerialization().unmarshal(r.out(), Map.class).get("allowed");
    }

    @Test
    void nothingReachesKubeSystemButDns() {
        Map<String, Map<String, Boolean>> dns = matrix("UDP", 53);
        for (String from : new String[] {"shop/frontend", "shop/backend", "monitoring/prometheus"}) {
            assertThat(dns.get(from).get("kube-system/coredns")).as(from).isTrue();
        }
        Map<String, Map<String, Boolean>> https = matrix("TCP", 443);
        assertThat(https.get("shop/frontend").get("kube-system/metrics-server")).isFalse();
        assertThat(https.get("monitoring/prometheus").get("kube-system/metrics-server"))
                .isFalse();
        assertThat(https.get("kube-system/coredns").get("kube-system/metrics-server"))
                .isTrue(); // passed on
        Map<String, Map<String, Boolean>> metrics = matrix("TCP", 9153);
        assertThat(metrics.get("monitoring/prometheus").get("kube-system/coredns"))
                .isTrue(); // named port "metrics"
        assertThat(metrics.get("shop/backend").get("kube-system/coredns")).isFalse();
    }

    @Test
    void controlPlaneNodesNetworkPoliciesAndTheBaseline() {
        Map<String, Map<String, Boolean>> etcd = matrix("TCP", 2379);
        assertThat(etcd.get("shop/frontend").get("kube-system/etcd-node-2")).isFalse(); // nodes peer
        assertThat(etcd.get("kube-system/coredns").get("kube-system/etcd-node-2"))
                .isTrue(); // not a subject
        assertThat(etcd.get("kube-system/etcd-node-2").get("shop/backend")).isTrue(); // node-local
        Map<String, Map<String, Boolean>> http = matrix("TCP", 8080);
        assertThat(http.get("shop/frontend").get("shop/backend")).isTrue();
        assertThat(http.get("monitoring/prometheus").get("shop/backend")).isFalse();
        Map<String, Map<String, Boolean>> web = matrix("TCP", 80);
        assertThat(web.get("monitoring/prometheus").get("shop/frontend")).isTrue();
        assertThat(web.get("shop/frontend").get("monitoring/prometheus")).isFalse(); // baseline
    }

    @Test
    void explainShowsTheWholePath() {
        Run denied = run(
                "explain",
                "--manifests",
                EXAMPLE,
                "--from",
                "shop/frontend",
                "--to",
                "kube-system/metrics-server",
                "--port",
                "443",
                "--protocol",
                "TCP");
        assertThat(denied.out())
                .startsWith("shop/frontend (10.244.1.10) -> kube-system/metrics-server (10.244.0.11) 443/TCP: denied")
                .contains("tier admin: denied by protect-kube-system ingress[3] (deny-the-rest)");
        Run passed = run(
                "explain",
                "--manifests",
                EXAMPLE,
                "--from",
                "kube-system/metrics-server",
                "--to",
                "kube-system/coredns",
                "--port",
                "9153",
                "--protocol",
                "TCP");
        assertThat(passed.out())
                .contains("tier admin: passed by protect-kube-system ingress[2] (kube-system-decides-itself)"
                        + " to the next tier\n")
                .contains("every tier passed: allowed");
        Run host = run(
                "explain",
                "--manifests",
                EXAMPLE,
                "--from",
                "shop/frontend",
                "--to",
                "kube-system/etcd-node-2",
                "--port",
                "2379",
                "--protocol",
                "TCP");
        assertThat(host.out())
                .contains("-> 10.0.0.12 2379/TCP: denied")
                .contains("tier admin: denied by cnp:no-control-plane-nodes egress[0] (deny-control-plane)")
                .contains("destination is node node-2");
        assertThat(host.err())
                .contains("note: pod kube-system/etcd-node-2 is hostNetwork: addressed as node node-2 (10.0.0.12)");
    }
}
