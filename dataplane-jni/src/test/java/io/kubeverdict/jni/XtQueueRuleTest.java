// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.tier.KernelTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The libnftnl-built NFQUEUE target in tables of our own, on the real kernel. */
@KernelTest
class XtQueueRuleTest {
    private TestNamespace ns;

    @BeforeEach
    void createNamespace() throws Exception {
        ns = TestNamespace.create("kvt-dp-xt");
    }

    @AfterEach
    void removeNamespace() throws Exception {
        ns.close();
    }

    @ParameterizedTest
    @CsvSource({"ip, 2", "ip6, 10", "inet, 1"})
    void replacesThePlaceholderWithTheTarget(String family, int nfproto) throws Exception {
        String listing = Netns.call(ns.path(), () -> {
            try (Nftables nft = new Nftables()) {
                nft.run("add table " + family + " kvt\n"
                        + "add chain " + family + " kvt q\n"
                        + "add rule " + family + " kvt q drop\n");
                XtQueueRule.install(nfproto, "kvt", "q", 7, true);
                String first = nft.run("list chain " + family + " kvt q");
                XtQueueRule.install(nfproto, "kvt", "q", 8, false);
                return first + nft.run("list chain " + family + " kvt q");
            }
        });
        assertThat(listing)
                .contains("queue num 7 bypass")
                .contains("queue num 8")
                .doesNotContain("drop");
    }

    @Test
    void severalQueuesAreBalancedWithCpuFanout() throws Exception {
        String listing = Netns.call(ns.path(), () -> {
            try (Nftables nft = new Nftables()) {
                nft.run("add table ip kvt\nadd chain ip kvt q\nadd rule ip kvt q drop\n");
                XtQueueRule.install(XtQueueRule.FAMILY_IPV4, "kvt", "q", 20, 4, true);
                return nft.run("list chain ip kvt q");
            }
        });
        assertThat(listing).containsPattern("queue (flags bypass,fanout to 20-23|num 20-23 bypass,fanout)");
    }

    @Test
    void aMissingChainIsENOENT() throws Exception {
        NativeException error = Netns.call(ns.path(), () -> {
            try {
                XtQueueRule.install(XtQueueRule.FAMILY_IPV4, "kvt_missing", "q", 1, false);
                return null;
            } catch (NativeException e) {
                return e;
            }
        });
        assertThat(error).isNotNull();
        assertThat(error.errno()).isEqualTo(Errno.ENOENT);
    }

    @Test
    void rejectsAQueueNumberOutOfRange() {
        assertThatThrownBy(() -> XtQueueRule.install(2, "t", "c", -1, false))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
