// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.CacheMarks;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CacheGenerationsTest {
    @Test
    void consecutiveGenerationsNeverShareATagAndTagsStayInTheMask() throws Exception {
        CacheGenerations g = new CacheGenerations(true, timeout -> true, 10);
        Set<Integer> seen = new HashSet<>();
        int previous = 0;
        for (int i = 0; i < 10; i++) {
            int mark = g.nextMark();
            assertThat(mark).isNotZero().isNotEqualTo(previous);
            assertThat(mark & ~CacheMarks.MASK).isZero();
            assertThat(g.arm(mark)).as("armed once older verdicts are in").isEqualTo(mark);
            seen.add(mark);
            previous = mark;
        }
        assertThat(seen).hasSize(CacheMarks.TAGS);
        assertThat(g.flushes()).isEqualTo(10);
        assertThat(g.unarmed()).isZero();
    }

    @Test
    void aGenerationWhoseOlderVerdictsDoNotArriveInTimeCachesNothing() throws Exception {
        long[] asked = new long[1];
        CacheGenerations g = new CacheGenerations(
                true,
                timeout -> {
                    asked[0] = timeout;
                    return false;
                },
                250);
        assertThat(g.arm(g.nextMark())).isZero();
        assertThat(asked[0]).isEqualTo(250);
        assertThat(g.unarmed()).isEqualTo(1);
    }

    @Test
    void offMeansNoTagsAndNoWaiting() throws Exception {
        assertThat(CacheGenerations.OFF.nextMark()).isZero();
        assertThat(CacheGenerations.OFF.enabled()).isFalse();
    }
}
