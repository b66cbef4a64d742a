// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AddressTableTest {

    @Test
    void narrowTableAgreesWithAHashMapIncludingExtAndZeroKeys() {
        Random random = new Random(1);
        AddressTable table = new AddressTable(5000, true);
        Map<Long, Long> expected = new HashMap<>();
        for (int i = 0; i < 5000; i++) {
            long address = i == 0 ? 0 : random.nextInt() & 0xFFFF_FFFFL;
            int ext = random.nextInt(3) == 0 ? (6 << 16 | random.nextInt(65536)) : 0;
            long value = random.nextInt(1 << 30);
            table.put(0, address, ext, value);
            expected.put(address | (long) ext << 32, value);
        }
        expected.forEach((key, value) ->
                assertThat(table.get(key & 0xFFFF_FFFFL, (int) (key >>> 32))).isEqualTo(value));
        assertThat(table.size()).isEqualTo(expected.size());
        for (int i = 0; i < 5000; i++) {
            long address = random.nextInt() & 0xFFFF_FFFFL;
            if (!expected.containsKey(address)) {
                assertThat(table.get(address, 0)).isEqualTo(AddressTable.ABSENT);
            }
        }
    }

    @Test
    void wideTableDistinguishesEveryKeyPart() {
        AddressTable table = new AddressTable(8, false);
        table.put(1, 2, 0, 10);
        table.put(2, 1, 0, 11);
        table.put(1, 2, 7, 12);
        table.put(1, 2, 0, 13); // replaces

        assertThat(table.get(1, 2, 0)).isEqualTo(13);
        assertThat(table.get(2, 1, 0)).isEqualTo(11);
        assertThat(table.get(1, 2, 7)).isEqualTo(12);
        assertThat(table.get(1, 3, 0)).isEqualTo(AddressTable.ABSENT);
        assertThat(table.lookup(2, 1, 0)).isEqualTo(11);
        assertThat(table.size()).isEqualTo(3);
    }

    @Test
    void refusesWhatItCannotHold() {
        AddressTable narrow = new AddressTable(1, true);
        assertThatThrownBy(() -> narrow.put(1, 0, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> narrow.put(0, 1L << 32, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> narrow.put(0, 1, 0, -5)).isInstanceOf(IllegalArgumentException.class);
        narrow.put(0, 1, 0, 1);
        narrow.put(0, 2, 0, 1);
        assertThatThrownBy(() -> narrow.put(0, 3, 0, 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anEditorWritesACopyOfTheTouchedPagesOnly() {
        AddressTable table = new AddressTable(2000, true);
        for (int i = 0; i < 2000; i++) {
            table.put(0, i, 0, i);
        }
        AddressTable.Editor editor = table.edit();
        assertThat(editor.put(0, 5, 0, 500)).isTrue();
        assertThat(editor.put(0, 100_000, 0, 7)).as("a new key").isTrue();
        AddressTable edited = editor.table();

        assertThat(edited.get(5, 0)).isEqualTo(500);
        assertThat(edited.get(100_000, 0)).isEqualTo(7);
        assertThat(edited.get(6, 0)).isEqualTo(6);
        assertThat(edited.size()).isEqualTo(2001);
        assertThat(table.get(5, 0)).as("the original is never written").isEqualTo(5);
        assertThat(table.get(100_000, 0)).isEqualTo(AddressTable.ABSENT);
        assertThat(table.size()).isEqualTo(2000);
    }

    @Test
    void anEditorRefusesNewKeysPastTheLoadLimit() {
        AddressTable table = new AddressTable(8, false); // 16 slots
        AddressTable.Editor editor = table.edit();
        int accepted = 0;
        while (editor.put(1, accepted, 0, 1)) {
            accepted++;
        }
        assertThat(accepted).isEqualTo(16 * AddressTable.MAX_LOAD_PERCENT / 100);
        assertThat(editor.put(1, 0, 0, 9))
                .as("replacing a key is always possible")
                .isTrue();
        assertThat(editor.table().get(1, 0, 0)).isEqualTo(9);
    }
}
