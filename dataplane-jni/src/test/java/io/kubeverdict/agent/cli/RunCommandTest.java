// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.run.AgentConfig;
import io.kubeverdict.runtime.BuildVersion;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class RunCommandTest {

    private static AgentConfig parse(String... args) throws Exception {
        RunCommand command = new RunCommand();
        new CommandLine(command).parseArgs(args);
        return command.config();
    }

    @Test
    void defaultsAndFlags() throws Exception {
        AgentConfig c = parse("--node", "n1", "--control-plane", "cp:9443", "--tls-ca", "ca.pem");
        assertThat(c.node()).isEqualTo("n1");
        assertThat(c.controlPlane()).isEqualTo("cp:9443");
        assertThat(c.tokenFile()).as("token by default").isEqualTo(Path.of("/var/run/secrets/kube-verdict/token"));
        assertThat(c.failOpen()).isFalse();
        assertThat(c.queueId()).isEqualTo(100);
        assertThat(c.queuePath()).isNull();
        assertThat(c.metricsListen().getPort()).isEqualTo(9101);
        assertThat(c.inspectListen())
                .as("loopback only by default")
                .isEqualTo(new InetSocketAddress("127.0.0.1", 9102));
        assertThat(c.tls().ca()).isEqualTo(Path.of("ca.pem"));
        assertThat(c.tls().cert()).isNull();
        assertThat(c.cutAction()).isEqualTo(CutAction.DROP);
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--cut-action", "reset")
                        .cutAction())
                .isEqualTo(CutAction.RESET);
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--cut-action", "none")
                        .cutAction())
                .isEqualTo(CutAction.NONE);

        AgentConfig d = parse(
                "--hostname-override",
                "n2",
                "--control-plane",
                "localhost:1",
                "--fail-open",
                "--nfqueue-id",
                "7",
                "--queue-path",
                "xtables",
                "--metrics-bind-address",
                "off",
                "--inspect-listen",
                "127.0.0.1:0");
        assertThat(d.node()).isEqualTo("n2");
        assertThat(d.failOpen()).isTrue();
        assertThat(d.queueId()).isEqualTo(7);
        assertThat(d.queuePath()).isEqualTo(QueuePath.XT_NFQUEUE);
        assertThat(d.metricsListen()).isNull();
        assertThat(d.inspectListen()).isEqualTo(new InetSocketAddress("127.0.0.1", 0));
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--queue-path", "nft")
                        .queuePath())
                .isEqualTo(QueuePath.NFT_QUEUE);
        assertThat(parse("--control-plane", "localhost:1").node())
                .as("kernel host name")
                .isNotBlank();
    }

    @Test
    void durationFlagsReadGoDurationsAndBareNumbersInTheirOldUnit() throws Exception {
        AgentConfig defaults = parse("--node", "n", "--control-plane", "localhost:1");
        assertThat(defaults.dns().minTtlSeconds()).isEqualTo(AgentConfig.Dns.DEFAULT_MIN_TTL_SECONDS);
        assertThat(defaults.dns().maxTtlSeconds()).isEqualTo(AgentConfig.Dns.DEFAULT_MAX_TTL_SECONDS);
        assertThat(defaults.state().maxAgeSeconds()).isEqualTo(AgentConfig.State.DEFAULT_MAX_AGE_SECONDS);
        AgentConfig go = parse(
                "--node",
                "n",
                "--control-plane",
                "localhost:1",
                "--dns-min-ttl",
                "1m",
                "--dns-max-ttl",
                "2h",
                "--state-max-age",
                "48h");
        assertThat(go.dns().minTtlSeconds()).isEqualTo(60);
        assertThat(go.dns().maxTtlSeconds()).isEqualTo(7200);
        assertThat(go.state().maxAgeSeconds()).isEqualTo(48 * 3600);
        AgentConfig bare = parse("--node", "n", "--control-plane", "localhost:1", "--dns-min-ttl", "5");
        assertThat(bare.dns().minTtlSeconds())
                .as("a bare number is seconds, as before")
                .isEqualTo(5);
    }

    @Test
    void telemetryAndLoggingFlags() throws Exception {
        assertThat(parse("--node", "n", "--control-plane", "localhost:1").telemetry())
                .isEqualTo(AgentConfig.Telemetry.DEFAULTS);
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--policy-verdict-series", "0")
                        .telemetry()
                        .policyVerdictSeries())
                .isZero();
        assertThatThrownBy(
                        () -> parse("--node", "n", "--control-plane", "localhost:1", "--policy-verdict-series", "-1"))
                .hasMessageContaining(">= 0");
        assertThat(AgentConfig.Telemetry.DEFAULTS.heartbeat()).isEqualTo(Duration.ofSeconds(20));
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--heartbeat-interval", "1s")
                        .telemetry()
                        .heartbeat())
                .isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--heartbeat-interval", "0"))
                .hasMessageContaining("--heartbeat-interval must be 100ms..1h");
        RunCommand command = new RunCommand();
        new CommandLine(command)
                .parseArgs(
                        "--node", "n", "--control-plane", "localhost:1", "--log-level", "warn", "--log-format", "json");
        assertThat(command.logging.format()).isEqualTo(io.kubeverdict.runtime.logging.LogFormat.json);
        assertThat(command.logging.level()).isEqualTo(ch.qos.logback.classic.Level.WARN);
    }

    @Test
    void queuesDefaultToOnePerCpuAndTheDnsQueueFollowsTheRange() throws Exception {
        AgentConfig c = parse("--node", "n", "--control-plane", "localhost:1");
        int cpus = Runtime.getRuntime().availableProcessors();
        assertThat(c.queues()).isEqualTo(Math.min(cpus, AgentConfig.DEFAULT_MAX_QUEUES));
        assertThat(c.dns().queueId()).isEqualTo(100 + c.queues());
        AgentConfig four = parse("--node", "n", "--control-plane", "localhost:1", "--nfqueue-id", "7", "--queues", "4");
        assertThat(four.queues()).isEqualTo(4);
        assertThat(four.dns().queueId()).isEqualTo(11);
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--queues", "1")
                        .dns()
                        .queueId())
                .isEqualTo(101);
        AgentConfig dnsBelow =
                parse("--node", "n", "--control-plane", "localhost:1", "--queues", "4", "--dns-queue-id", "99");
        assertThat(dnsBelow.dns().queueId()).isEqualTo(99);
        assertThat(dnsBelow.guard().queueId())
                .as("the hold queue skips the verdict queues")
                .isEqualTo(104);
        assertThat(four.guard().queueId()).as("after the DNS queue").isEqualTo(12);
        assertThatThrownBy(() -> parse(
                        "--node", "n", "--control-plane", "localhost:1", "--queues", "4", "--hold-queue-id", "101"))
                .hasMessageContaining("--hold-queue-id");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--pod-cidr", "10.0.0.0/33"))
                .hasMessageContaining("--pod-cidr");
        assertThatThrownBy(() -> parse(
                        "--node", "n", "--control-plane", "localhost:1", "--queues", "4", "--dns-queue-id", "102"))
                .hasMessageContaining("outside the verdict queues 100..103");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--queues", "0"))
                .hasMessageContaining("--queues");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--queues", "65"))
                .hasMessageContaining("--queues");
        assertThatThrownBy(() -> parse(
                        "--node", "n", "--control-plane", "localhost:1", "--nfqueue-id", "65535", "--queues", "2"))
                .hasMessageContaining("65535");
    }

    @Test
    void theVerdictCacheIsOnByDefaultWithFlagsForItsShapeAndToTurnItOff() throws Exception {
        AgentConfig c = parse("--node", "n", "--control-plane", "localhost:1");
        assertThat(c.verdictCache()).isEqualTo(AgentConfig.DEFAULT_VERDICT_CACHE);
        assertThat(c.verdictCache()).isEqualTo(io.kubeverdict.agent.nft.CacheSettings.on(60, 65536));
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--no-verdict-cache")
                        .verdictCache()
                        .enabled())
                .isFalse();
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--verdict-cache")
                        .verdictCache()
                        .enabled())
                .isTrue();
        AgentConfig shaped = parse(
                "--node",
                "n",
                "--control-plane",
                "localhost:1",
                "--verdict-cache",
                "--verdict-cache-ttl",
                "5",
                "--verdict-cache-size",
                "9");
        assertThat(shaped.verdictCache()).isEqualTo(io.kubeverdict.agent.nft.CacheSettings.on(5, 9));
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--verdict-cache-ttl", "0"))
                .hasMessageContaining("TTL");
    }

    @Test
    void theQueueLengthHasABoundedDefaultAndAFlag() throws Exception {
        AgentConfig c = parse("--node", "n", "--control-plane", "localhost:1");
        assertThat(c.queueLength()).isEqualTo(AgentConfig.DEFAULT_QUEUE_LENGTH).isEqualTo(8192);
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--queue-length", "8")
                        .queueLength())
                .isEqualTo(8);
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--queue-length", "0"))
                .hasMessageContaining("--queue-length");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--queue-length", "65537"))
                .hasMessageContaining("--queue-length");
    }

    @Test
    void rejectsHalfTlsAndNonsense() {
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--tls-cert", "c.pem"))
                .hasMessageContaining("--tls-key");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--queue-path", "iptables"))
                .hasMessageContaining("auto, nft or xtables");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--cut-action", "kill"))
                .hasMessageContaining("drop, reset or none");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--nfqueue-id", "70000"))
                .hasMessageContaining("0..65535");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", "9102"))
                .hasMessageContaining("HOST:PORT");
    }

    @Test
    void theTokenTravelsInPlaintextOnlyToLoopbackOrOnPurpose() throws Exception {
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:9443"))
                .hasMessageContaining("--control-plane cp:9443")
                .hasMessageContaining("--tls-ca")
                .hasMessageContaining("--insecure");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "10.0.0.1:9443"))
                .hasMessageContaining("plaintext");
        assertThat(parse("--node", "n", "--control-plane", "[::1]:9443").tokenFile())
                .isNotNull();
        assertThat(parse("--node", "n", "--control-plane", "cp:9443", "--auth", "none")
                        .tokenFile())
                .isNull();
        assertThat(parse("--node", "n", "--control-plane", "cp:9443", "--token-file", "/t", "--insecure")
                        .tokenFile())
                .isEqualTo(Path.of("/t"));
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:9443", "--auth", "mtls", "--tls-ca", "ca"))
                .hasMessageContaining("--auth mtls needs");
        AgentConfig mtls = parse(
                "--node",
                "n",
                "--control-plane",
                "cp:9443",
                "--auth",
                "mtls",
                "--tls-ca",
                "ca",
                "--tls-cert",
                "c",
                "--tls-key",
                "k");
        assertThat(mtls.tokenFile()).isNull();
        assertThat(mtls.tls().cert()).isEqualTo(Path.of("c"));
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:9443", "--auth", "maybe"))
                .hasMessageContaining("token, mtls or none");
    }

    @Test
    void plaintextInspectionBeyondLoopbackOnlyWithInsecure() throws Exception {
        for (String address : new String[] {"0.0.0.0:9102", ":9102", "10.0.0.5:9102", "[::]:9102"}) {
            assertThatThrownBy(
                            () -> parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", address))
                    .as(address)
                    .hasMessageContaining("--inspect-listen")
                    .hasMessageContaining("--insecure");
        }
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", "[::1]:9102")
                        .inspectListen())
                .isEqualTo(new InetSocketAddress("::1", 9102));
        assertThat(parse(
                                "--node",
                                "n",
                                "--control-plane",
                                "localhost:1",
                                "--inspect-listen",
                                "10.0.0.5:9102",
                                "--insecure")
                        .inspectListen()
                        .getPort())
                .isEqualTo(9102);
    }

    @Test
    void aCleanStopKeepsTheTableWhenFailClosedUnlessTold() throws Exception {
        assertThat(parse("--node", "n", "--control-plane", "localhost:1").removeTableOnExit())
                .as("fail-closed")
                .isFalse();
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--fail-open")
                        .removeTableOnExit())
                .as("fail-open")
                .isTrue();
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--on-exit", "remove")
                        .removeTableOnExit())
                .isTrue();
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--fail-open", "--on-exit", "keep")
                        .removeTableOnExit())
                .isFalse();
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--on-exit", "later"))
                .hasMessageContaining("auto, keep or remove");
    }

    @Test
    void addressesParseWithTheSharedParser() throws Exception {
        AgentConfig c = parse(
                "--node",
                "n",
                "--control-plane",
                "[fd00::1]:9443",
                "--metrics-bind-address",
                "[::1]:9101",
                "--inspect-listen",
                "0.0.0.0:9102",
                "--insecure");
        assertThat(c.tokenFile())
                .as("--insecure: the token goes in plaintext, on purpose")
                .isNotNull();
        assertThat(c.controlPlane()).isEqualTo("[fd00::1]:9443");
        assertThat(c.metricsListen()).isEqualTo(new InetSocketAddress("::1", 9101));
        assertThat(c.inspectListen()).isEqualTo(new InetSocketAddress("0.0.0.0", 9102));
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", ":9102", "--insecure")
                        .inspectListen())
                .isEqualTo(new InetSocketAddress(9102));
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", "off")
                        .inspectListen())
                .isNull();
        assertThat(parse("--node", "n", "--control-plane", "localhost:1", "--metrics-bind-address=")
                        .metricsListen())
                .isNull();

        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp"))
                .hasMessageContaining("--control-plane")
                .hasMessageContaining("HOST:PORT");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", ":9443"))
                .hasMessageContaining("with a host");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:0"))
                .hasMessageContaining("1-65535");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--inspect-listen", "::1:9102"))
                .hasMessageContaining("needs brackets");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "localhost:1", "--tls-server-name", "cp"))
                .hasMessageContaining("--tls-server-name needs");
    }

    @Test
    void versionOnTheRootAndTheAgentCommand() {
        for (String[] args : new String[][] {{"--version"}, {"agent", "--version"}, {"sandbox", "-V"}}) {
            StringWriter out = new StringWriter();
            int code = AgentMain.commandLine().setOut(new PrintWriter(out)).execute(args);
            assertThat(code).as(String.join(" ", args)).isZero();
            assertThat(out.toString().strip())
                    .as(String.join(" ", args))
                    .isEqualTo("kube-verdict " + BuildVersion.current());
        }
    }

    @Test
    void dnsResolversAreTheListGivenOrTheNameserversOfResolvConf(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        assertThat(RunCommand.dnsResolvers("10.96.0.10, fd00::a", dir.resolve("absent")))
                .containsExactly("10.96.0.10", "fd00::a");
        assertThatThrownBy(() -> RunCommand.dnsResolvers("10.96.0.10,kube-dns", dir))
                .hasMessageContaining("kube-dns");
        Path conf = dir.resolve("resolv.conf");
        java.nio.file.Files.writeString(
                conf,
                "search x.svc.cluster.local\nnameserver 169.254.20.10\nnameserver 10.96.0.10\n"
                        + "nameserver fe80::1%eth0\noptions ndots:5\n");
        assertThat(RunCommand.dnsResolvers("auto", conf)).containsExactly("169.254.20.10", "10.96.0.10");
        assertThat(RunCommand.dnsResolvers("auto", dir.resolve("absent")))
                .as("none: nothing is learned")
                .isEmpty();
    }
}
