// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BlockSegmentsTest {

    @Test
    void aSegmentsMaskIsTheMapsAnswerForEveryAddressInIt() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            boolean v6 = round % 2 == 1;
            RangeSet[] rules = new RangeSet[1 + random.nextInt(6)];
            MaskMap.Builder map = new MaskMap.Builder();
            for (int r = 0; r < rules.length; r++) {
                if (random.nextInt(4) == 0) {
                    continue; // a rule without blocks of this family
                }
                RangeSet.Builder b = new RangeSet.Builder();
                b.add(cidr(random, v6), random.nextBoolean() ? List.of() : List.of(cidr(random, v6)));
                rules[r] = b.build();
                rules[r].addTo(map, 1L << r);
            }
            MaskMap blocks = map.build();
            BlockSegments segments = BlockSegments.of(rules);
            long[] masks = segments.masksOf(blocks);
            for (int probe = 0; probe < 300; probe++) {
                IpAddress a = address(random, v6);
                int s = segments.of(a.hi(), a.lo());
                long expected = blocks.get(a.hi(), a.lo());
                if (masks == null) {
                    assertThat(blocks.isEmpty())
                            .as("only a map without ranges has no masks at a compile")
                            .isTrue();
                    assertThat(expected).isZero();
                } else {
                    assertThat(masks[s]).as(a + " in segment " + s).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void aMapCutInsideASegmentGetsNoMasks() {
        BlockSegments segments = BlockSegments.of(new RangeSet[] {ranges("10.0.0.0/24")});
        assertThat(segments.count()).isEqualTo(3); // below, the /24, above

        assertThat(segments.masksOf(map(ranges("10.0.0.0/24"), ranges("10.0.0.0/24"))))
                .containsExactly(0, 3, 0);
        assertThat(segments.masksOf(map(ranges("10.0.0.4/30"))))
                .as("10.0.0.4 starts no segment")
                .isNull();
        assertThat(segments.masksOf(MaskMap.EMPTY)).isNull();
    }

    @Test
    void tooManySegmentsNumberNothing() {
        RangeSet[] rules = new RangeSet[BlockSegments.MAX_SEGMENTS];
        for (int i = 0; i < rules.length; i++) {
            rules[i] = ranges("10." + (i >> 8) + "." + (i & 0xFF) + ".0/25");
        }
        BlockSegments segments = BlockSegments.of(rules);

        assertThat(segments.count()).isZero();
        assertThat(segments.of(0, IpAddress.parse("10.0.0.1").lo())).isEqualTo(AddressEntry.NO_SEGMENT);
        assertThat(segments.masksOf(map(rules[0]))).isNull();
    }

    @Test
    void anEntryKeepsItsThreeFieldsApart() {
        int inline = Membership.inline(new int[] {3, 7}, 2);
        long entry = AddressEntry.of(AddressEntry.MAX_ENDPOINTS - 1, AddressEntry.NO_SEGMENT, inline);

        assertThat(entry).isPositive();
        assertThat(AddressEntry.endpoint(entry)).isEqualTo(AddressEntry.MAX_ENDPOINTS - 1);
        assertThat(AddressEntry.segment(entry)).isEqualTo(AddressEntry.NO_SEGMENT);
        assertThat(AddressEntry.membership(entry)).isEqualTo(inline);
        assertThat(AddressEntry.endpoint(AddressEntry.of(-1, 5, 0))).isEqualTo(-1);
        assertThat(AddressEntry.segment(AddressTable.ABSENT))
                .as("absent: past every segment array")
                .isGreaterThanOrEqualTo(BlockSegments.MAX_SEGMENTS);
        assertThatThrownBy(() -> AddressEntry.of(AddressEntry.MAX_ENDPOINTS, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static RangeSet ranges(String cidr) {
        RangeSet.Builder b = new RangeSet.Builder();
        b.add(Cidr.tryParse(cidr), List.of());
        return b.build();
    }

    private static MaskMap map(RangeSet... rules) {
        MaskMap.Builder b = new MaskMap.Builder();
        for (int r = 0; r < rules.length; r++) {
            rules[r].addTo(b, 1L << r);
        }
        return b.build();
    }

    private static Cidr cidr(Random random, boolean v6) {
        IpAddress a = address(random, v6);
        int prefix = v6 ? 100 + random.nextInt(29) : 20 + random.nextInt(13);
        return Cidr.tryParse(a + "/" + prefix);
    }

    private static IpAddress address(Random random, boolean v6) {
        return IpAddress.parse(
                v6
                        ? "fd00::" + Integer.toHexString(random.nextInt(1 << 12))
                        : "10.0." + random.nextInt(16) + "." + random.nextInt(256));
    }
}
