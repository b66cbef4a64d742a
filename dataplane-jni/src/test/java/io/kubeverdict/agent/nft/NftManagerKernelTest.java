// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.jni.NftablesException;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Our table on a real kernel: probe, leftovers, element updates under traffic. */
@KernelTest
class NftManagerKernelTest {
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80, 81);
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    private static int allow80(PacketTuple p) {
        return p.dstPort == 80 ? 1 : 0;
    }

    @Test
    void probeAgreesWithNftAndLeavesNothingBehind() throws Exception {
        QueuePath detected;
        try (NetnsThread t = new NetnsThread(bed.node.path())) {
            detected = t.call(() -> {
                try (Nftables nft = new Nftables()) {
                    return QueuePathProbe.detect(nft, "kube_verdict");
                }
            });
        }
        bed.node.exec("nft", "add", "table", "inet", "kvt_check");
        bed.node.exec("nft", "add", "chain", "inet", "kvt_check", "c");
        boolean nftHasQueue = bed.node
                        .tryExec("nft", "add", "rule", "inet", "kvt_check", "c", "queue", "num", "1")
                        .exitCode()
                == 0;
        bed.node.exec("nft", "delete", "table", "inet", "kvt_check");
        assertThat(detected).isEqualTo(nftHasQueue ? QueuePath.NFT_QUEUE : QueuePath.XT_NFQUEUE);
        assertThat(bed.node.exec("nft", "list", "tables")).isBlank();
    }

    @Test
    void onAKernelWithoutNftQueueTheQueueTextFailsOnlyForTheMissingExpressionAndLeavesNothing() throws Exception {
        try (NetnsThread t = new NetnsThread(bed.node.path())) {
            QueuePath detected = t.call(() -> {
                try (Nftables nft = new Nftables()) {
                    return QueuePathProbe.detect(nft, "kube_verdict");
                }
            });
            Assumptions.assumeTrue(
                    detected == QueuePath.XT_NFQUEUE,
                    "this kernel has nft_queue; VerdictLoopKernelTest runs the NFT_QUEUE path for real");
            NftablesException error = t.call(() -> {
                try (Nftables nft = new Nftables()) {
                    NftManager manager = NftManager.create(nft, "kube_verdict", 9, true, QueuePath.NFT_QUEUE);
                    manager.start(PodAddresses.of(List.of(SERVER4)));
                    return null;
                } catch (NftablesException e) {
                    return e;
                }
            });
            assertThat(error).isNotNull();
            assertThat(error.nftError()).contains("No such file or directory").doesNotContain("syntax error");
            assertThat(bed.node.exec("nft", "list", "tables"))
                    .as("all or nothing")
                    .isBlank();
        }
    }

    @Test
    void aLeftoverOfAnEarlierRunIsReplacedInPlace() throws Exception {
        Dataplane first = Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 5, false, Dataplane.BOTH_PODS);
        assertThat(first.leftoverReplaced).isFalse();
        first.abandon(); // the agent died; its table stays and drops new connections (fail-closed)
        assertThat(Probe.tcp(bed.client, SERVER4, 80)).isFalse();

        try (Dataplane second = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 6, false, List.of(SERVER4)))) {
            assertThat(second.leftoverReplaced).isTrue();
            String listing = second.listing();
            assertThat(listing)
                    .contains("queue num 6")
                    .doesNotContain("queue num 5")
                    .doesNotContain(DpTestbed.CLIENT4);
            assertThat(bed.node.exec("nft", "list", "tables").strip()).isEqualTo("table inet kube_verdict");
            second.listen(NftManagerKernelTest::allow80, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isFalse();
        }
    }

    @Test
    void aOneQueueLeftoverIsReplacedByAQueueRangeAndBack() throws Exception {
        Dataplane first = Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 5, false, Dataplane.BOTH_PODS);
        first.abandon(); // an agent of the one-queue release died
        try (Dataplane second =
                Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, null, 5, 3, false, Dataplane.BOTH_PODS)) {
            assertThat(second.leftoverReplaced).isTrue();
            assertThat(second.listing()).containsPattern("queue (flags fanout to 5-7|num 5-7 fanout)");
            second.listen(NftManagerKernelTest::allow80, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isFalse();
            second.abandon();
        }
        try (Dataplane third =
                bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 5, false, Dataplane.BOTH_PODS))) {
            assertThat(third.leftoverReplaced).isTrue();
            assertThat(third.listing()).contains("queue num 5").doesNotContain("5-7");
        }
    }

    @Test
    void theSplitLayoutEnforcesBothFamiliesAndReplacesAnInetLeftover() throws Exception {
        Dataplane first = Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 11, true, Dataplane.BOTH_PODS);
        first.abandon();
        try (Dataplane dp = bed.own(
                Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, TableLayout.SPLIT, 12, false, Dataplane.BOTH_PODS))) {
            assertThat(dp.leftoverReplaced).isTrue();
            assertThat(bed.node.exec("nft", "list", "tables").strip())
                    .isEqualTo("table ip kube_verdict\ntable ip6 kube_verdict");
            assertThat(dp.listing()).contains("queue num 12").doesNotContain("queue num 11");
            dp.listen(NftManagerKernelTest::allow80, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isFalse();
            assertThat(Probe.tcp(bed.client, SERVER6, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER6, 81)).isFalse();
            dp.update(List.of(SERVER4));
            assertThat(Probe.tcp(bed.client, SERVER6, 81)).as("v6 deselected").isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isFalse();
        }
        assertThat(bed.node.exec("nft", "list", "tables"))
                .as("remove() takes both tables")
                .isBlank();
    }

    @Test
    void elementUpdatesSwitchEnforcementWithoutRebuildingTheTable() throws Exception {
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 7, false, List.of()))) {
            dp.listen(p -> 0, new RecordingObserver(), false);
            String before = handles(bed);
            assertThat(Probe.tcp(bed.client, SERVER4, 81))
                    .as("no pod selected: not queued")
                    .isTrue();

            dp.update(List.of(SERVER4, SERVER6));
            assertThat(Probe.tcp(bed.client, SERVER4, 81))
                    .as("server selected: judged, denied")
                    .isFalse();
            assertThat(Probe.tcp(bed.client, SERVER6, 81)).isFalse();

            dp.update(List.of(SERVER6));
            assertThat(Probe.tcp(bed.client, SERVER4, 81))
                    .as("deselected again")
                    .isTrue();
            assertThat(Probe.tcp(bed.client, SERVER6, 81)).isFalse();
            assertThat(handles(bed))
                    .as("same chains and rules, only elements changed")
                    .isEqualTo(before);
            assertThat(dp.listing()).contains("queue num 7");
        }
    }

    @Test
    void connectionsUnderLoadSurviveElementUpdates() throws Exception {
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 10, false, List.of(SERVER4)))) {
            dp.listen(NftManagerKernelTest::allow80, new RecordingObserver(), false);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger ok = new AtomicInteger();
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            Thread load = new Thread(
                    () -> {
                        try {
                            Netns.enterCurrentThread(bed.client.path());
                            while (!stop.get()) {
                                try (Socket s = new Socket()) {
                                    s.connect(new InetSocketAddress(SERVER4, 80), Probe.TIMEOUT_MILLIS);
                                    s.setSoTimeout(Probe.TIMEOUT_MILLIS);
                                    if (Probe.roundTrip(s, "x")) {
                                        ok.incrementAndGet();
                                    } else {
                                        failures.add("no echo");
                                    }
                                } catch (Exception e) {
                                    failures.add(e.toString());
                                }
                            }
                        } catch (RuntimeException e) {
                            failures.add(e.toString());
                        }
                    },
                    "load");
            load.start();
            try {
                for (int i = 0; i < 40; i++) {
                    dp.update(i % 2 == 0 ? List.of(SERVER4, DpTestbed.CLIENT4, SERVER6) : List.of(SERVER4));
                    Thread.sleep(25);
                }
            } finally {
                stop.set(true);
                load.join(10_000);
            }
            assertThat(failures).isEmpty();
            assertThat(ok.get()).isGreaterThan(10);
        }
    }

    @Test
    void anElementRemovedBehindOurBackIsResynced() throws Exception {
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 8, true, List.of(SERVER4)))) {
            bed.node.exec("nft", "delete", "element", "inet", "kube_verdict", "pods4", "{", SERVER4, "}");
            dp.update(List.of()); // the diff would delete a missing element: rewritten instead
            dp.update(List.of(SERVER4, DpTestbed.CLIENT4));
            assertThat(dp.manager.applied()).isEqualTo(PodAddresses.of(List.of(SERVER4, DpTestbed.CLIENT4)));
            assertThat(bed.node.exec("nft", "list", "set", "inet", "kube_verdict", "pods4"))
                    .contains(SERVER4)
                    .contains(DpTestbed.CLIENT4);
        }
    }

    /** The handles of our chains and rules (elements excluded): equal iff nothing was rebuilt. */
    private static String handles(DpTestbed bed) throws Exception {
        String listing = bed.node.exec("nft", "-a", "list", "table", "inet", "kube_verdict");
        StringBuilder out = new StringBuilder();
        Matcher m = Pattern.compile("(chain \\w+|goto \\w+|queue num \\d+[a-z ]*).*# handle (\\d+)")
                .matcher(listing);
        while (m.find()) {
            out.append(m.group(1)).append('=').append(m.group(2)).append('\n');
        }
        assertThat(out).isNotEmpty();
        return out.toString();
    }
}
