// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.tier.KernelTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Calls the real shim inside a namespace this test creates and removes. */
@KernelTest
class NativeShimTest {
    private TestNamespace ns;

    @BeforeEach
    void createNamespace() throws Exception {
        assertThat(NativeLibrary.unavailabilityCause()).isNull();
        ns = TestNamespace.create("kvt-shim");
    }

    @AfterEach
    void removeNamespace() throws Exception {
        ns.close();
    }

    @Test
    void nftablesAppliesATransactionAndListsIt() throws Exception {
        String listing = Netns.call(ns.path(), () -> {
            try (Nftables nft = new Nftables()) {
                nft.run("add table inet kv_shim_test\n"
                        + "add set inet kv_shim_test pods4 { type ipv4_addr; }\n"
                        + "add element inet kv_shim_test pods4 { 10.9.0.1 }\n");
                return nft.run("list table inet kv_shim_test");
            }
        });
        assertThat(listing).contains("table inet kv_shim_test").contains("10.9.0.1");
        // The table lives in the test namespace only.
        assertThat(ns.exec("nft", "list", "tables")).contains("kv_shim_test");
    }

    @Test
    void nftablesErrorsCarryNftsMessageAndKeepNothing() throws Exception {
        NftablesException error = Netns.call(ns.path(), () -> {
            try (Nftables nft = new Nftables()) {
                try {
                    nft.run("add table inet kv_partial\nadd chain inet kv_partial c { bogus; }\n");
                    return null;
                } catch (NftablesException e) {
                    return e;
                }
            }
        });
        assertThat(error).isNotNull();
        assertThat(error.errno()).isEqualTo(Errno.EINVAL);
        assertThat(error.nftError()).contains("syntax error");
        // All or nothing: the table of the failed transaction does not exist.
        assertThat(ns.exec("nft", "list", "tables")).doesNotContain("kv_partial");
    }

    @Test
    void nfqueueBindsAndUnbinds() throws Exception {
        int fd = Netns.call(ns.path(), () -> {
            try (NfQueue queue = new NfQueue(4711, NfQueue.FLAG_GSO | NfQueue.FLAG_FAIL_OPEN)) {
                return queue.fd();
            }
        });
        assertThat(fd).isPositive();
    }

    @Test
    void rejectsAQueueNumberOutOfRange() {
        assertThatThrownBy(() -> new NfQueue(70000, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void enteringAMissingNamespaceIsATypedError() {
        assertThatThrownBy(() -> Netns.call("/run/netns/kv-does-not-exist", () -> 1))
                .isInstanceOf(NativeException.class)
                .hasMessageContaining("ENOENT");
    }
}
