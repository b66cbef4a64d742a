// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RangeSetTest {

    @Test
    void unionOfBlocksMinusExceptsMatchesANaiveCheck() {
        Random random = new Random(7);
        for (int round = 0; round < 300; round++) {
            List<Cidr> cidrs = new ArrayList<>();
            List<List<Cidr>> excepts = new ArrayList<>();
            RangeSet.Builder builder = new RangeSet.Builder();
            for (int b = 0; b < 1 + random.nextInt(4); b++) {
                Cidr cidr = randomV4Cidr(random, 20 + random.nextInt(9));
                List<Cidr> ex = new ArrayList<>();
                for (int e = 0; e < random.nextInt(3); e++) {
                    ex.add(randomV4Cidr(random, 24 + random.nextInt(9)));
                }
                cidrs.add(cidr);
                excepts.add(ex);
                builder.add(cidr, ex);
            }
            RangeSet set = builder.build();
            for (int probe = 0; probe < 500; probe++) {
                long address = 0x0A00_0000L | random.nextInt(1 << 16);
                boolean expected = false;
                for (int b = 0; b < cidrs.size(); b++) {
                    boolean in = inside(cidrs.get(b), address)
                            && excepts.get(b).stream().noneMatch(e -> inside(e, address));
                    expected |= in;
                }
                assertThat(set.contains(0, address))
                        .as("%s", IpAddress.v4((int) address))
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void v6BlockWithExceptAtBothEdgesAndTheWholeSpace() {
        RangeSet.Builder builder = new RangeSet.Builder();
        builder.add(
                Cidr.tryParse("::/0"),
                List.of(Cidr.tryParse("::/128"), Cidr.tryParse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")));
        RangeSet set = builder.build();
        assertThat(set.contains(0, 0)).isFalse();
        assertThat(set.contains(0, 1)).isTrue();
        assertThat(set.contains(-1L, -2L)).isTrue();
        assertThat(set.contains(-1L, -1L)).isFalse();
        assertThat(set.contains(0, -1L)).isTrue(); // carries across the 64-bit boundary
        assertThat(set.contains(1, 0)).isTrue();
    }

    @Test
    void adjacentAndOverlappingBlocksMerge() {
        RangeSet.Builder builder = new RangeSet.Builder();
        builder.add(Cidr.tryParse("10.0.0.0/25"), List.of());
        builder.add(Cidr.tryParse("10.0.0.128/25"), List.of());
        builder.add(Cidr.tryParse("10.0.0.0/24"), List.of());
        builder.add(Cidr.tryParse("0.0.0.0/0"), List.of(Cidr.tryParse("0.0.0.0/1")));
        RangeSet set = builder.build();
        assertThat(set.size()).isEqualTo(2);
        assertThat(set.contains(0, 0x0A00_00FFL)).isTrue();
        assertThat(set.contains(0, 0x0A00_0100L)).isFalse();
        assertThat(set.contains(0, 0xFFFF_FFFFL)).isTrue();
    }

    private static Cidr randomV4Cidr(Random random, int prefix) {
        long address = 0x0A00_0000L | random.nextInt(1 << 16);
        return Cidr.tryParse(IpAddress.v4((int) address) + "/" + prefix);
    }

    private static boolean inside(Cidr c, long address) {
        return address >= c.startLo() && address <= c.endLo();
    }
}
