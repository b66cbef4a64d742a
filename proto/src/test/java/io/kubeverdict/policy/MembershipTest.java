// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MembershipTest {

    private final MembershipPool pool = new MembershipPool(new int[] {0, 0, 0, 0}, 1);

    @Test
    void oneOrTwoSmallSetsAreInlineLongerListsAndBigNumbersAreInThePool() {
        int one = Membership.of(new int[] {7}, 1, pool);
        int two = Membership.of(new int[] {0, Membership.MAX_INLINE_SET}, 2, pool);
        int three = Membership.of(new int[] {1, 2, 3}, 3, pool);
        int big = Membership.of(new int[] {Membership.MAX_INLINE_SET + 1}, 1, pool);

        assertThat(Membership.isInline(one)).isTrue();
        assertThat(Membership.isInline(two)).isTrue();
        assertThat(Membership.isInline(three)).isFalse();
        assertThat(Membership.isInline(big)).isFalse();
        assertThat(Membership.of(new int[0], 0, pool)).isEqualTo(Membership.EMPTY);
        assertThat(new int[] {one, two, three, big}).doesNotContain(Membership.UNKNOWN, Membership.EMPTY);

        int[] p = pool.array();
        assertThat(Membership.contains(p, one, 7)).isTrue();
        assertThat(Membership.contains(p, one, 6)).isFalse();
        assertThat(Membership.contains(p, one, -1))
                .as("no second set is not set -1")
                .isFalse();
        assertThat(Membership.contains(p, two, 0)).isTrue();
        assertThat(Membership.contains(p, two, Membership.MAX_INLINE_SET)).isTrue();
        assertThat(Membership.contains(p, two, 1)).isFalse();
        assertThat(Membership.contains(p, three, 2)).isTrue();
        assertThat(Membership.contains(p, three, 4)).isFalse();
        assertThat(Membership.contains(p, big, Membership.MAX_INLINE_SET + 1)).isTrue();
        assertThat(Membership.contains(p, Membership.EMPTY, 0)).isFalse();

        int[] out = new int[3];
        assertThat(Membership.copy(p, two, out)).isEqualTo(2);
        assertThat(out).startsWith(0, Membership.MAX_INLINE_SET);
        assertThat(Membership.copy(p, three, out)).isEqualTo(3);
        assertThat(out).containsExactly(1, 2, 3);
        assertThat(Membership.size(p, one)).isEqualTo(1);
    }

    @Test
    void thePoolAppendsAfterEverythingAndKeepsWhatOlderArraysHold() {
        int[] before = pool.array();
        int first = Membership.of(new int[] {1, 2, 3}, 3, pool);
        int second = Membership.of(new int[] {4, 5, 6}, 3, pool); // grows the array

        assertThat(pool.array()).isNotSameAs(before);
        assertThat(Membership.contains(pool.array(), first, 3)).isTrue();
        assertThat(Membership.contains(pool.array(), second, 6)).isTrue();
        assertThat(pool.appended()).isEqualTo(8);
    }
}
