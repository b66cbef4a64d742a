// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
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
}
