// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RulesetRendererTest {
    private static final RulesetConfig NFT_OPEN = new RulesetConfig("kube_verdict", 100, true, QueuePath.NFT_QUEUE);

    static Stream<Arguments> queueStatements() {
        return Stream.of(
                Arguments.of(QueuePath.NFT_QUEUE, true, "queue num 7 bypass"),
                Arguments.of(QueuePath.NFT_QUEUE, false, "queue num 7"),
                Arguments.of(QueuePath.XT_NFQUEUE, true, "accept"),
                Arguments.of(QueuePath.XT_NFQUEUE, false, "drop"));
    }

    @ParameterizedTest
    @MethodSource("queueStatements")
    void queueStatementFollowsPathAndFailureMode(QueuePath path, boolean failOpen, String expected) {
        RulesetConfig config = new RulesetConfig("t", 7, failOpen, path);
        assertThat(RulesetRenderer.queueStatement(config)).isEqualTo(expected);
        assertThat(RulesetRenderer.replaceTable(config, PodAddresses.EMPTY))
                .contains("chain to_queue {\n\t\t" + expected + "\n");
    }

    @Test
    void replaceTableDeletesAndRebuildsInOneText() {
        String text =
                RulesetRenderer.replaceTable(NFT_OPEN, PodAddresses.of(List.of("10.0.0.2", "10.0.0.1", "fd00::1")));
        assertThat(text)
                .startsWith("add table inet kube_verdict\ndelete table inet kube_verdict\n"
                        + "add table ip kube_verdict\ndelete table ip kube_verdict\n"
                        + "add table ip6 kube_verdict\ndelete table ip6 kube_verdict\n"
                        + "table inet kube_verdict {\n");
        assertThat(text).contains("comment \"managed by kube-verdict\"");
        assertThat(text).contains("set pods4 {\n\t\ttype ipv4_addr\n\t\telements = { 10.0.0.1, 10.0.0.2 }\n");
        assertThat(text).contains("set pods6 {\n\t\ttype ipv6_addr\n\t\telements = { fd00::1 }\n");
        assertThat(text)
                .contains("type filter hook forward priority filter; policy accept;\n"
                        + "\t\tct mark & 0x04000000 == 0x04000000 goto cut\n"
                        + "\t\tct state != new accept\n"
                        + "\t\tct state new ip saddr @pods4 goto selected\n"
                        + "\t\tct state new ip daddr @pods4 goto selected\n"
                        + "\t\tct state new ip6 saddr @pods6 goto selected\n"
                        + "\t\tct state new ip6 daddr @pods6 goto selected\n");
        assertThat(text)
                .contains("type filter hook input priority filter; policy accept;\n"
                        + "\t\tct mark & 0x04000000 == 0x04000000 goto cut\n"
                        + "\t\tct state != new accept\n"
                        + "\t\tct state new ip saddr @pods4 goto selected\n"
                        + "\t\tct state new ip6 saddr @pods6 goto selected\n");
        assertThat(text)
                .as("without a cache, a selected pod's new connection goes straight to be judged")
                .contains("chain selected {\n\t\tgoto judge\n\t}\n");
        String output =
                text.substring(text.indexOf("chain output {"), text.indexOf("}", text.indexOf("chain output {")));
        assertThat(output)
                .as("node-originated traffic is never queued: the output hook only stops cut connections")
                .doesNotContain("to_queue")
                .contains("ct mark & 0x04000000 == 0x04000000 tcp flags & rst == rst accept\n"
                        + "\t\tct mark & 0x04000000 == 0x04000000 goto cut\n");
    }

    @Test
    void thePodAddressGuardQueuesAddressesOfItsRangesThatAreNotKnown() {
        PodAddresses guarded = PodAddresses.of(List.of("10.0.0.1"))
                .withGuard(new PodAddresses.Guard(
                        java.util.Set.of("10.0.0.0/24"),
                        java.util.Set.of("fd00::/64"),
                        java.util.Set.of("10.0.0.1", "10.0.0.254"),
                        java.util.Set.of()));
        String text = RulesetRenderer.replaceTable(NFT_OPEN, guarded);
        assertThat(text)
                .contains("set guard4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\tauto-merge\n"
                        + "\t\telements = { 10.0.0.0/24 }\n");
        assertThat(text).contains("set known4 {\n\t\ttype ipv4_addr\n\t\telements = { 10.0.0.1, 10.0.0.254 }\n");
        assertThat(text)
                .contains("\t\tct state new ip6 daddr @pods6 goto selected\n"
                        + "\t\tct state new ip saddr @guard4 ip saddr != @known4 goto judge\n"
                        + "\t\tct state new ip daddr @guard4 ip daddr != @known4 goto judge\n"
                        + "\t\tct state new ip6 saddr @guard6 ip6 saddr != @known6 goto judge\n"
                        + "\t\tct state new ip6 daddr @guard6 ip6 daddr != @known6 goto judge\n");
        assertThat(text)
                .contains("\t\tct state new ip6 saddr @pods6 goto selected\n"
                        + "\t\tct state new ip saddr @guard4 ip saddr != @known4 goto judge\n"
                        + "\t\tct state new ip6 saddr @guard6 ip6 saddr != @known6 goto judge\n\t}\n");

        // A new pod: known first, and only then (the same transaction) the rest; new ranges replace the old.
        PodAddresses next = PodAddresses.of(List.of("10.0.0.1"))
                .withGuard(new PodAddresses.Guard(
                        java.util.Set.of("10.0.1.0/24"), java.util.Set.of("fd00::/64"),
                        java.util.Set.of("10.0.0.1", "10.0.0.254", "10.0.0.7"), java.util.Set.of()));
        assertThat(RulesetRenderer.diff(NFT_OPEN, guarded, next))
                .isEqualTo("add element inet kube_verdict known4 { 10.0.0.7 }\n"
                        + "flush set inet kube_verdict guard4\n"
                        + "add element inet kube_verdict guard4 { 10.0.1.0/24 }\n");
        assertThat(RulesetRenderer.diff(NFT_OPEN, next, next)).isEmpty();
    }

    @Test
    void everyQueuedConnectionIsMarkedAdmittedBeforeTheQueueAndEachHookHasOneBaseChain() {
        String text = RulesetRenderer.replaceTable(NFT_OPEN, PodAddresses.EMPTY);
        assertThat(text)
                .contains("chain selected {\n\t\tgoto judge\n\t}\n")
                .contains(
                        "chain judge {\n\t\tct mark set ct mark | 0x08000000 counter name queued goto to_queue\n\t}\n");
        assertThat(text.split("type filter hook forward", -1))
                .as("one base chain per hook: every packet of the node passes each")
                .hasSize(2);
        assertThat(text.split("type filter hook input", -1)).hasSize(2);
        assertThat(text.split("type filter hook output", -1)).hasSize(2);
        assertThat(text).doesNotContain("priority filter + 1");
    }

    @Test
    void theCutActionDecidesTheCutChain() {
        RulesetConfig drop = new RulesetConfig("t", 1, false, QueuePath.XT_NFQUEUE, TableLayout.INET, CutAction.DROP);
        RulesetConfig reset = new RulesetConfig("t", 1, false, QueuePath.XT_NFQUEUE, TableLayout.INET, CutAction.RESET);
        RulesetConfig none = new RulesetConfig("t", 1, false, QueuePath.XT_NFQUEUE, TableLayout.INET, CutAction.NONE);
        assertThat(RulesetRenderer.replaceTable(drop, PodAddresses.EMPTY)).contains("chain cut {\n\t\tdrop\n\t}\n");
        assertThat(RulesetRenderer.replaceTable(reset, PodAddresses.EMPTY))
                .contains("chain cut {\n\t\tmeta l4proto tcp reject with tcp reset\n\t\tdrop\n\t}\n");
        assertThat(RulesetRenderer.replaceTable(none, PodAddresses.EMPTY))
                .doesNotContain("chain cut")
                .doesNotContain("hook output")
                .doesNotContain("0x04000000")
                .contains("ct mark set ct mark | 0x08000000");
        assertThat(CutAction.parse("reset")).isEqualTo(CutAction.RESET);
        assertThatThrownBy(() -> CutAction.parse("rst")).hasMessageContaining("drop, reset or none");
    }

    @Test
    void theSplitLayoutPutsEachFamilyInItsOwnTable() {
        RulesetConfig split = new RulesetConfig("kv", 3, false, QueuePath.XT_NFQUEUE, TableLayout.SPLIT);
        String text = RulesetRenderer.replaceTable(split, PodAddresses.of(List.of("10.0.0.1", "fd00::1")));
        String ip = text.substring(text.indexOf("table ip kv {"), text.indexOf("table ip6 kv {"));
        String ip6 = text.substring(text.indexOf("table ip6 kv {"));
        assertThat(text).doesNotContain("table inet kv {").contains("delete table inet kv\n");
        assertThat(ip)
                .contains("set pods4")
                .contains("elements = { 10.0.0.1 }")
                .contains("ip saddr @pods4 goto selected")
                .contains("chain to_queue {\n\t\tdrop\n")
                .doesNotContain("pods6")
                .doesNotContain("ip6");
        assertThat(ip6)
                .contains("set pods6")
                .contains("elements = { fd00::1 }")
                .contains("ip6 daddr @pods6 goto selected")
                .doesNotContain("pods4");
        assertThat(RulesetRenderer.diff(split, PodAddresses.EMPTY, PodAddresses.of(List.of("10.0.0.9", "fd00::9"))))
                .isEqualTo("add element ip kv pods4 { 10.0.0.9 }\nadd element ip6 kv pods6 { fd00::9 }\n");
        assertThat(RulesetRenderer.resync(split, PodAddresses.EMPTY))
                .isEqualTo(
                        "flush set ip kv pods4\nflush set ip6 kv pods6\n"
                                + "flush set ip kv guard4\nflush set ip6 kv guard6\nflush set ip kv known4\nflush set ip6 kv known6\n");
        assertThat(RulesetRenderer.families(split)).containsExactly("ip", "ip6");
    }

    @Test
    void emptySetsHaveNoElementsClause() {
        assertThat(RulesetRenderer.replaceTable(NFT_OPEN, PodAddresses.EMPTY)).doesNotContain("elements");
    }

    static Stream<Arguments> diffs() {
        return Stream.of(
                Arguments.of(List.of(), List.of(), ""),
                Arguments.of(List.of("10.0.0.1"), List.of("10.0.0.1"), ""),
                Arguments.of(
                        List.of(),
                        List.of("10.0.0.1", "fd00::2"),
                        "add element inet kube_verdict pods4 { 10.0.0.1 }\nadd element inet kube_verdict pods6 { fd00::2 }\n"),
                Arguments.of(
                        List.of("10.0.0.1", "10.0.0.2"),
                        List.of("10.0.0.2", "10.0.0.3"),
                        "add element inet kube_verdict pods4 { 10.0.0.3 }\ndelete element inet kube_verdict pods4 { 10.0.0.1 }\n"),
                Arguments.of(
                        List.of("fd00::1", "fd00::2"),
                        List.of(),
                        "delete element inet kube_verdict pods6 { fd00::1, fd00::2 }\n"),
                Arguments.of(List.of("fd00:0:0::1"), List.of("FD00::1"), ""));
    }

    @ParameterizedTest
    @MethodSource("diffs")
    void diffTouchesOnlyChangedElements(List<String> from, List<String> to, String expected) {
        assertThat(RulesetRenderer.diff(NFT_OPEN, PodAddresses.of(from), PodAddresses.of(to)))
                .isEqualTo(expected);
    }

    @Test
    void resyncFlushesAndAddsInOneText() {
        assertThat(RulesetRenderer.resync(NFT_OPEN, PodAddresses.of(List.of("10.1.1.1"))))
                .isEqualTo("flush set inet kube_verdict pods4\nflush set inet kube_verdict pods6\n"
                        + "flush set inet kube_verdict guard4\nflush set inet kube_verdict guard6\n"
                        + "flush set inet kube_verdict known4\nflush set inet kube_verdict known6\n"
                        + "add element inet kube_verdict pods4 { 10.1.1.1 }\n");
    }

    static Stream<Arguments> addresses() {
        return Stream.of(
                Arguments.of("10.0.0.1", "10.0.0.1", true),
                Arguments.of(" 192.168.1.255 ", "192.168.1.255", true),
                Arguments.of("FD00:0:0:0:0:0:0:1", "fd00::1", false),
                Arguments.of("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", false),
                Arguments.of("0:0:0:0:0:0:0:0", "::", false),
                Arguments.of("fe80:0:0:0:1:2:3:4", "fe80::1:2:3:4", false),
                Arguments.of("1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0", false),
                Arguments.of("::ffff:10.0.0.1", "10.0.0.1", true));
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void addressesAreCanonical(String in, String canonical, boolean v4) {
        PodAddresses a = PodAddresses.of(List.of(in));
        assertThat(v4 ? a.v4() : a.v6()).containsExactly(canonical);
    }

    @Test
    void rejectsNamesAndPrefixes() {
        for (String bad : List.of("example.com", "10.0.0.0/24", "", "fe80::1%eth0", "10.0.0")) {
            assertThatThrownBy(() -> PodAddresses.of(List.of(bad)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void configRejectsBadNamesAndQueues() {
        assertThatThrownBy(() -> new RulesetConfig("bad name", 1, true, QueuePath.NFT_QUEUE))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RulesetConfig("t", 65536, true, QueuePath.NFT_QUEUE))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RulesetConfig("t", 1, true, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void severalQueuesAreOneRangeWithCpuFanout() {
        RulesetConfig open =
                new RulesetConfig("t", 100, true, QueuePath.NFT_QUEUE, TableLayout.INET, CutAction.DROP, 4);
        RulesetConfig closed =
                new RulesetConfig("t", 100, false, QueuePath.NFT_QUEUE, TableLayout.INET, CutAction.DROP, 4);
        assertThat(RulesetRenderer.queueStatement(open)).isEqualTo("queue num 100-103 fanout,bypass");
        assertThat(RulesetRenderer.queueStatement(closed)).isEqualTo("queue num 100-103 fanout");
        assertThat(RulesetRenderer.replaceTable(open, PodAddresses.of(List.of("10.0.0.1"))))
                .contains("queue num 100-103 fanout,bypass")
                .startsWith(
                        RulesetRenderer.deleteTable(open)); // leftovers of any earlier run go in the same transaction
        // the xtables path keeps its placeholder; the shim installs --queue-balance (NftManagerKernelTest)
        assertThat(RulesetRenderer.queueStatement(open.withPath(QueuePath.XT_NFQUEUE)))
                .isEqualTo("accept");
        assertThat(open.withLayout(TableLayout.SPLIT).queues()).isEqualTo(4);
        assertThat(open.lastQueue()).isEqualTo(103);
    }

    @Test
    void aQueueRangeMustFitAndHoldOne() {
        assertThatThrownBy(() ->
                        new RulesetConfig("t", 65534, true, QueuePath.NFT_QUEUE, TableLayout.INET, CutAction.DROP, 3))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> new RulesetConfig("t", 1, true, QueuePath.NFT_QUEUE, TableLayout.INET, CutAction.DROP, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new RulesetConfig("t", 65534, true, QueuePath.NFT_QUEUE, TableLayout.INET, CutAction.DROP, 2)
                        .lastQueue())
                .isEqualTo(65535);
    }

    @Test
    void theVerdictCacheHasSetsRulesAndATagOnlyWhenOn() {
        RulesetConfig off = new RulesetConfig("t", 7, false, QueuePath.XT_NFQUEUE, TableLayout.INET, CutAction.DROP, 1);
        RulesetConfig on = new RulesetConfig(
                "t", 7, false, QueuePath.XT_NFQUEUE, TableLayout.INET, CutAction.DROP, 1, CacheSettings.on(30, 100));
        PodAddresses pods = PodAddresses.of(List.of("10.0.0.1", "fd00::1"));
        assertThat(RulesetRenderer.replaceTable(off, pods, CacheMarks.mark(1))).doesNotContain("cache");
        assertThat(CacheRules.cacheReset(off, CacheMarks.mark(1))).isEmpty();
        assertThat(CacheRules.cacheAlive(off)).isEmpty();

        String table = RulesetRenderer.replaceTable(on, pods, CacheMarks.mark(2));
        assertThat(table)
                .contains("type ipv4_addr . ipv4_addr . inet_proto . inet_service")
                .contains("timeout 30s")
                .contains("size 100")
                .contains("set cachetag4 {\n\t\ttype mark\n\t\telements = { 0x00002000 }")
                .contains(
                        "ct state new meta l4proto { tcp, udp, sctp } meta nfproto @cachelive4 ip saddr . ip daddr . "
                                + "meta l4proto . th dport @cache4 counter name cachehits4 ct mark set ct mark | 0x08000000 accept")
                .contains("set cachelive6 {\n\t\ttype nf_proto\n\t\tflags timeout\n\t\telements = { ipv6 timeout 2s }")
                .contains(
                        "chain cache_add {\n\t\tmeta mark & 0x00003000 @cachetag4 meta l4proto { tcp, udp, sctp } add "
                                + "@cache4 { ip saddr . ip daddr . meta l4proto . th dport } counter name cacheadds4\n")
                .contains("counter name cacheadds6\n\t\tmeta mark set meta mark & 0xffffcfff accept\n\t}\n");
        // a tagged packet is taken for the agent's repeated verdict only on a connection the judge chain marked
        String forward = table.substring(table.indexOf("chain forward {"), table.indexOf("chain input {"));
        assertThat(forward)
                .contains("\t\tct state != new accept\n"
                        + "\t\tmeta mark & 0x00003000 != 0 ct mark & 0x08000000 == 0x08000000 goto cache_add\n"
                        + "\t\tct state new ip saddr @pods4 goto selected\n");
        // the hit rules are only for selected pods' connections, before the queue
        String selected = table.substring(table.indexOf("chain selected {"), table.indexOf("chain cut {"));
        assertThat(selected.indexOf("@cache6")).isLessThan(selected.indexOf("goto to_queue"));
        assertThat(table.substring(table.indexOf("chain forward {")))
                .as("unselected connections never reach the cache's lookups")
                .doesNotContain("@cache4 counter name cachehits4");

        assertThat(CacheRules.cacheReset(on, CacheMarks.mark(3)))
                .isEqualTo("flush set inet t cachetag4\nflush set inet t cachetag6\nflush set inet t cache4\n"
                        + "flush set inet t cache6\nadd element inet t cachetag4 { 0x00003000 }\n"
                        + "add element inet t cachetag6 { 0x00003000 }\n");
        assertThat(CacheRules.cacheAlive(on))
                .isEqualTo("add element inet t cachelive4 { ipv4 timeout 2s }\n"
                        + "delete element inet t cachelive4 { ipv4 }\n"
                        + "add element inet t cachelive4 { ipv4 timeout 2s }\n"
                        + "add element inet t cachelive6 { ipv6 timeout 2s }\n"
                        + "delete element inet t cachelive6 { ipv6 }\n"
                        + "add element inet t cachelive6 { ipv6 timeout 2s }\n");
        assertThat(CacheRules.cacheReset(on.withLayout(TableLayout.SPLIT), 0))
                .isEqualTo("flush set ip t cachetag4\nflush set ip6 t cachetag6\nflush set ip t cache4\n"
                        + "flush set ip6 t cache6\n");
    }
}
