// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AddressClaimsTest {
    @Test
    void anAddressTwoPodsClaimIsNeitherOnesUntilOneLetsGo() {
        AddressClaims claims = new AddressClaims();
        assertThat(claims.claim("x/old", List.of("10.0.0.5", "fd00::5"))).isEmpty();
        assertThat(claims.claim("y/new", List.of("10.0.0.5")))
                .as("the first claimant loses it")
                .containsExactly("x/old");
        assertThat(claims.uncontested(List.of("10.0.0.5", "fd00::5"))).containsExactly("fd00::5");
        assertThat(claims.conflicts()).isEqualTo(Map.of("10.0.0.5", List.of("x/old", "y/new")));

        assertThat(claims.claim("x/old", List.of()))
                .as("the last claimant has it again")
                .containsExactly("y/new");
        assertThat(claims.uncontested(List.of("10.0.0.5"))).containsExactly("10.0.0.5");
        assertThat(claims.conflicts()).isEmpty();
    }

    @Test
    void aThirdClaimantChangesNothingForTheOthersAndReclaimingIsStable() {
        AddressClaims claims = new AddressClaims();
        claims.claim("a/1", List.of("10.0.0.5"));
        claims.claim("a/2", List.of("10.0.0.5"));
        assertThat(claims.claim("a/3", List.of("10.0.0.5"))).isEmpty();
        assertThat(claims.claim("a/3", List.of("10.0.0.5"))).isEmpty();
        assertThat(claims.claim("a/1", List.of())).isEmpty();
        assertThat(claims.conflicts()).isEqualTo(Map.of("10.0.0.5", List.of("a/2", "a/3")));
    }

    @Test
    void theConflictsAreThoseOfEveryClaimWhateverTheOrderOfChanges() {
        for (int seed = 0; seed < 200; seed++) {
            Random r = new Random(seed);
            AddressClaims claims = new AddressClaims();
            Map<String, List<String>> held = new HashMap<>();
            for (int step = 0; step < 60; step++) {
                String pod = "ns/p" + r.nextInt(8);
                List<String> addresses = new ArrayList<>();
                for (int a = r.nextInt(3); a > 0; a--) {
                    String address = "10.0.0." + r.nextInt(5);
                    if (!addresses.contains(address)) {
                        addresses.add(address);
                    }
                }
                claims.claim(pod, addresses);
                held.put(pod, addresses);
                // every address's claimants, counted from all claims as held
                Map<String, List<String>> expected = new TreeMap<>();
                held.forEach(
                        (p, list) -> list.forEach(address -> expected.computeIfAbsent(address, k -> new ArrayList<>())
                                .add(p)));
                expected.values().removeIf(owners -> owners.size() < 2);
                expected.values().forEach(owners -> owners.sort(null));
                assertThat(claims.conflicts())
                        .as("seed %d, step %d", seed, step)
                        .isEqualTo(expected);
            }
        }
    }
}
