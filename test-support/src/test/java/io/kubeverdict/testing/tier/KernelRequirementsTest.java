// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testing.tier.KernelRequirements.Machine;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class KernelRequirementsTest {
    @Test
    void aCompleteMachineMissesNothing() {
        assertThat(KernelRequirements.missing(new Machine(true, List.of("ip", "nft"), true, Optional.empty())))
                .isEmpty();
    }

    @Test
    void everyMissingPieceIsNamed() {
        List<String> missing = KernelRequirements.missing(new Machine(
                false, List.of("ip"), false, Optional.of("libnftnl.so.11: cannot open shared object file")));
        assertThat(missing).hasSize(4);
        assertThat(String.join("\n", missing)).contains("not root", "'nft'", "nfnetlink_queue", "libnftnl.so.11");
    }
}
