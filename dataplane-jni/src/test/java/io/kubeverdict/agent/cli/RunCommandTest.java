package io.kubeverdict.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.run.AgentConfig;
import java.net.InetSocketAddress;
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
        AgentConfig c = parse("--node", "n1", "--control-plane", "cp:9443");
        assertThat(c.node()).isEqualTo("n1");
        assertThat(c.controlPlane()).isEqualTo("cp:9443");
        assertThat(c.failOpen()).isFalse();
        assertThat(c.queueId()).isEqualTo(100);
        assertThat(c.queuePath()).isNull();
        assertThat(c.metricsListen().getPort()).isEqualTo(9101);
        assertThat(c.inspectListen().getPort()).isEqualTo(9102);
        assertThat(c.tls()).isNull();
        assertThat(c.cutAction()).isEqualTo(CutAction.DROP);
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--cut-action", "reset").cutAction()).isEqualTo(CutAction.RESET);
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--cut-action", "none").cutAction()).isEqualTo(CutAction.NONE);

        AgentConfig d = parse("--hostname-override", "n2", "--control-plane", "cp:1", "--fail-open", "--nfqueue-id", "7",
                "--queue-path", "xtables", "--metrics-bind-address", "off", "--inspect-listen", "127.0.0.1:0");
        assertThat(d.node()).isEqualTo("n2");
        assertThat(d.failOpen()).isTrue();
        assertThat(d.queueId()).isEqualTo(7);
        assertThat(d.queuePath()).isEqualTo(QueuePath.XT_NFQUEUE);
        assertThat(d.metricsListen()).isNull();
        assertThat(d.inspectListen()).isEqualTo(new InetSocketAddress("127.0.0.1", 0));
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--queue-path", "nft").queuePath()).isEqualTo(QueuePath.NFT_QUEUE);
        assertThat(parse("--control-plane", "cp:1").node()).as("kernel host name").isNotBlank();
    }

    @Test
    void rejectsHalfTlsAndNonsense() {
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--tls-cert", "c.pem"))
                .hasMessageContaining("--tls-key");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--queue-path", "iptables"))
                .hasMessageContaining("auto, nft or xtables");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--cut-action", "kill"))
                .hasMessageContaining("drop, reset or none");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--nfqueue-id", "70000"))
                .hasMessageContaining("0..65535");
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--inspect-listen", "9102"))
                .hasMessageContaining("HOST:PORT");
    }

    @Test
    void aCleanStopKeepsTheTableWhenFailClosedUnlessTold() throws Exception {
        assertThat(parse("--node", "n", "--control-plane", "cp:1").removeTableOnExit()).as("fail-closed").isFalse();
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--fail-open").removeTableOnExit()).as("fail-open").isTrue();
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--on-exit", "remove").removeTableOnExit()).isTrue();
        assertThat(parse("--node", "n", "--control-plane", "cp:1", "--fail-open", "--on-exit", "keep").removeTableOnExit())
                .isFalse();
        assertThatThrownBy(() -> parse("--node", "n", "--control-plane", "cp:1", "--on-exit", "later"))
                .hasMessageContaining("auto, keep or remove");
    }

    @Test
    void listenAddresses() {
        assertThat(ListenAddress.parse(":9101")).isEqualTo(new InetSocketAddress(9101));
        assertThat(ListenAddress.parse("[::1]:80")).isEqualTo(new InetSocketAddress("::1", 80));
        assertThat(ListenAddress.parse("0.0.0.0:9101")).isEqualTo(new InetSocketAddress("0.0.0.0", 9101));
        assertThat(ListenAddress.parse("off")).isNull();
        assertThat(ListenAddress.parse("")).isNull();
    }
}
