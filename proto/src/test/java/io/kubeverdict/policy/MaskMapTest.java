// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MaskMapTest {

    @Test
    void narrowAndWideLookupsEqualTheOrOfContainingRanges() {
        Random random = new Random(11);
        for (int round = 0; round < 300; round++) {
            boolean wide = round % 2 == 1;
            List<long[]> ranges = new ArrayList<>();
            MaskMap.Builder builder = new MaskMap.Builder();
            for (int r = 0; r < random.nextInt(12); r++) {
                long hi = wide ? random.nextInt(3) - 1 : 0; // -1 exercises the unsigned top half
                long start = random.nextInt(1000);
                long end = start + random.nextInt(200);
                long mask = 1L << random.nextInt(64);
                ranges.add(new long[] {hi, start, end, mask});
                builder.add(hi, start, hi, end, mask);
            }
            MaskMap map = builder.build();
            for (int probe = 0; probe < 300; probe++) {
                long hi = wide ? random.nextInt(3) - 1 : 0;
                long value = random.nextInt(1300) - 50;
                long expected = 0;
                for (long[] r : ranges) {
                    boolean in = r[0] == hi && value >= r[1] && value <= r[2];
                    expected |= in ? r[3] : 0;
                }
                assertThat(map.get(hi, value))
                        .as("round %d value %d:%d", round, hi, value)
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void aRangeEndingAtTheTopOfTheSpaceHasNoEndPoint() {
        MaskMap.Builder builder = new MaskMap.Builder();
        builder.add(-1L, -16L, -1L, -1L, 4);
        MaskMap map = builder.build();
        assertThat(map.get(-1L, -1L)).isEqualTo(4);
        assertThat(map.get(-1L, -17L)).isZero();
        assertThat(MaskMap.EMPTY.get(0, 5)).isZero();
    }
}
