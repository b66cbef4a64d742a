package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The sandbox gives pods the addresses `matrix --assign-ips` gives them, to the last one of the range. */
class PlacementTest {
    private static List<Pod> pods(String... names) {
        StringBuilder yaml = new StringBuilder();
        for (String name : names) {
            yaml.append("apiVersion: v1\nkind: Pod\nmetadata: {namespace: n, name: ").append(name)
                    .append("}\nspec: {containers: [{name: c}]}\n---\n");
        }
        try {
            return new ManifestLoader().loadText("pods.yaml", yaml.toString()).pods();
        } catch (io.kubeverdict.controlplane.manifests.ManifestLoadException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, String> matrixAssigns(List<Pod> pods, String cidr) {
        return WhatIfDefaults.apply(new java.util.ArrayList<>(pods), cidr, "n").stream()
                .collect(Collectors.toMap(WhatIfDefaults.Assignment::pod, WhatIfDefaults.Assignment::ip));
    }

    @Test
    void sameAddressesAsMatrixAssignIpsUpToTheLastOfTheRange() {
        Placement placement = Placement.of(pods("a", "b", "c"), 2, "10.9.0.0/30");
        assertThat(placement.ipsOf()).containsExactly(Map.entry("n/a", List.of("10.9.0.1")),
                Map.entry("n/b", List.of("10.9.0.2")), Map.entry("n/c", List.of("10.9.0.3")));
        placement.ipsOf().forEach((pod, ips) -> assertThat(matrixAssigns(pods("a", "b", "c"), "10.9.0.0/30"))
                .containsEntry(pod, ips.get(0)));
        assertThat(placement.nodeOf()).containsExactly(Map.entry("n/a", "node-1"), Map.entry("n/b", "node-2"),
                Map.entry("n/c", "node-1"));
    }

    @Test
    void aFullRangeIsAnErrorAsInMatrix() {
        assertThatThrownBy(() -> Placement.of(pods("a", "b", "c", "d"), 1, "10.9.0.0/30"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exhausted");
        assertThatThrownBy(() -> matrixAssigns(pods("a", "b", "c", "d"), "10.9.0.0/30")).hasMessageContaining("exhausted");
    }

    @Test
    void ipv6RangesWorkAndNamesAreNotCidrs() {
        assertThat(Placement.of(pods("a", "b"), 1, "fd00:9::/120").ipsOf())
                .containsEntry("n/a", List.of("fd00:9::1")).containsEntry("n/b", List.of("fd00:9::2"));
        assertThatThrownBy(() -> Placement.of(pods("a"), 1, "localhost/24")).hasMessageContaining("not a CIDR");
    }
}
