// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WhatIfDefaultsTest {

    private static Pod pod(String name, String ip) {
        PodBuilder b = new PodBuilder()
                .withNewMetadata()
                .withNamespace("a")
                .withName(name)
                .endMetadata();
        return ip == null
                ? b.build()
                : b.withNewStatus().withPodIP(ip).endStatus().build();
    }

    @Test
    void assignsIpv6AddressesInCanonicalFormSkippingTakenOnes() {
        List<Pod> pods = new ArrayList<>(List.of(pod("p", null), pod("taken", "FD00:0:0:0:0:0:0:2"), pod("q", null)));

        var assigned = WhatIfDefaults.apply(pods, "fd00::/126", WhatIfDefaults.DEFAULT_NODE);

        assertThat(assigned)
                .containsExactly(
                        new WhatIfDefaults.Assignment("a/p", "fd00::1"),
                        new WhatIfDefaults.Assignment("a/q", "fd00::3"));
        assertThat(pods.get(2).getStatus().getPodIP()).isEqualTo("fd00::3");
    }

    @Test
    void theLastAddressOfTheRangeIsUsedThenTheRangeIsExhausted() {
        List<Pod> three = new ArrayList<>(List.of(pod("p", null), pod("q", null), pod("r", null)));
        assertThat(WhatIfDefaults.apply(three, "255.255.255.252/30", "n"))
                .extracting(WhatIfDefaults.Assignment::ip)
                .containsExactly("255.255.255.253", "255.255.255.254", "255.255.255.255");

        List<Pod> four = new ArrayList<>(List.of(pod("p", null), pod("q", null), pod("r", null), pod("s", null)));
        assertThatThrownBy(() -> WhatIfDefaults.apply(four, "255.255.255.252/30", "n"))
                .hasMessageContaining("exhausted");
        assertThatThrownBy(() -> WhatIfDefaults.apply(
                        new ArrayList<>(List.of(pod("p", null))), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "n"))
                .hasMessageContaining("exhausted");
        assertThatThrownBy(() -> WhatIfDefaults.apply(new ArrayList<>(), "10.0.0.0/33", "n"))
                .hasMessageContaining("not a CIDR");
    }
}
