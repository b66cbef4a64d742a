// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.QueuePathProbe;
import io.kubeverdict.agent.nft.TableLayout;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The DNS table on a real kernel: present exactly while some pod is watched (its chains cost every packet). */
@KernelTest
class DnsTableKernelTest {
    private static final String TABLE = "kvt_dns";
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    @Test
    void theTableExistsOnlyWhileAPodIsWatchedAndALeftoverGoesAtTheFirstState() throws Exception {
        PodAddresses one = PodAddresses.of(List.of("10.0.0.5"));
        PodAddresses two = PodAddresses.of(List.of("10.0.0.5", "10.0.0.6"));
        try (NetnsThread t = new NetnsThread(bed.node.path())) {
            t.call(() -> {
                try (Nftables nft = new Nftables()) {
                    QueuePath path = QueuePathProbe.detect(nft, TABLE);
                    // A killed agent's table, watching a pod.
                    nft.run(DnsRuleset.replaceTable(TABLE, 7, path, TableLayout.INET, one));
                    assertThat(tables()).contains(TABLE);

                    DnsTable dns = new DnsTable(nft, TABLE, 7, path, TableLayout.INET);
                    dns.program(PodAddresses.EMPTY);
                    assertThat(tables()).as("nothing watched: no table").doesNotContain(TABLE);
                    dns.program(PodAddresses.EMPTY);
                    assertThat(tables()).doesNotContain(TABLE);

                    dns.program(one);
                    assertThat(nodeExec("nft", "list", "set", "inet", TABLE, DnsRuleset.SET_V4))
                            .contains("10.0.0.5");
                    dns.program(two);
                    assertThat(nodeExec("nft", "list", "set", "inet", TABLE, DnsRuleset.SET_V4))
                            .contains("10.0.0.5")
                            .contains("10.0.0.6");
                    assertThat(nodeExec("nft", "list", "chain", "inet", TABLE, DnsRuleset.CHAIN_QUERIES))
                            .as("the port is tested before the set, so other packets skip the lookup")
                            .contains("udp dport 53 ct direction original ip saddr @" + DnsRuleset.SET_V4);

                    dns.program(PodAddresses.EMPTY);
                    assertThat(tables())
                            .as("the last watched pod gone: table gone")
                            .doesNotContain(TABLE);
                    dns.program(one);
                    assertThat(nodeExec("nft", "list", "set", "inet", TABLE, DnsRuleset.SET_V4))
                            .contains("10.0.0.5")
                            .doesNotContain("10.0.0.6");
                    dns.remove();
                    assertThat(tables()).doesNotContain(TABLE);
                }
                return null;
            });
        }
    }

    private String tables() throws Exception {
        return nodeExec("nft", "list", "tables");
    }

    private String nodeExec(String... command) throws Exception {
        return bed.node.exec(command);
    }
}
