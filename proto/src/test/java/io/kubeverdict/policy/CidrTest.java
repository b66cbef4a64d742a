// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

    @Test
    void clearsHostBitsAndSpansTheBlock() {
        Cidr v4 = Cidr.tryParse("10.1.2.3/8");
        assertThat(IpAddress.v4((int) v4.startLo()).toString()).isEqualTo("10.0.0.0");
        assertThat(IpAddress.v4((int) v4.endLo()).toString()).isEqualTo("10.255.255.255");
        Cidr all = Cidr.tryParse("::/0");
        assertThat(all.startHi()).isZero();
        assertThat(all.endHi()).isEqualTo(-1L);
        assertThat(all.endLo()).isEqualTo(-1L);
        Cidr v6 = Cidr.tryParse("fd00:1:2:3:4::/72");
        assertThat(IpAddress.v6(v6.startHi(), v6.startLo()).toString()).isEqualTo("fd00:1:2:3::");
        assertThat(IpAddress.v6(v6.endHi(), v6.endLo()).toString()).isEqualTo("fd00:1:2:3:ff:ffff:ffff:ffff");
        assertThat(Cidr.tryParse("10.0.0.1/32").endLo())
                .isEqualTo(Cidr.tryParse("10.0.0.1/32").startLo());
    }

    @ParameterizedTest
    @CsvSource({
        "10.1.2.3/8, 10.0.0.0/8",
        "0.0.0.0/0, 0.0.0.0/0",
        "fd00::1/64, fd00::/64",
        "10.0.0.1/32, 10.0.0.1/32",
        "10.0.0.255/25, 10.0.0.128/25",
        "FD00:0:0:0:0:0:0:1/128, fd00::1/128",
        "::/0, ::/0"
    })
    void formatsCanonically(String text, String canonical) {
        assertThat(Cidr.tryParse(text)).hasToString(canonical);
        assertThat(Cidr.tryParse(canonical)).isEqualTo(Cidr.tryParse(text));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "10.0.0.0",
                "10.0.0.0/33",
                "10.0.0.0/",
                "10.0.0.0/-1",
                "10.0.0.0/08",
                "fd00::/129",
                "x/8",
                "/8",
                "10.0.0.0/1000",
                "",
                "10.0.0.0/\u0668",
                "10.0.0.0/\uFF18"
            })
    void rejectsBadCidrs(String text) {
        assertThat(Cidr.tryParse(text)).isNull();
    }

    @ParameterizedTest
    @CsvSource({
        "10.0.0.0/8, 10.1.0.0/16, true",
        "10.0.0.0/8, 10.0.0.0/8, true",
        "10.0.0.0/8, 10.255.255.255/32, true",
        "10.0.0.0/16, 10.0.0.0/8, false",
        "10.0.0.0/8, 11.0.0.0/16, false",
        "0.0.0.0/0, 255.255.255.255/32, true",
        "fd00::/64, fd00::ffff:0:0:0/80, true",
        "fd00::/64, fd00:0:0:1::/64, false",
        "::/0, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128, true",
        "0.0.0.0/0, ::/0, false",
        "::/0, 10.0.0.0/8, false",
    })
    void containsBlocksOfItsFamilyOnly(String outer, String inner, boolean contained) {
        assertThat(Cidr.tryParse(outer).contains(Cidr.tryParse(inner))).isEqualTo(contained);
    }

    @ParameterizedTest
    @CsvSource({
        "10.0.0.0/24, 10.0.0.0, true",
        "10.0.0.0/24, 10.0.0.255, true",
        "10.0.0.0/24, 10.0.1.0, false",
        "10.0.0.0/24, 9.255.255.255, false",
        "128.0.0.0/1, 255.255.255.255, true",
        "128.0.0.0/1, 127.255.255.255, false",
        "8000::/1, ffff::1, true",
        "8000::/1, 7fff::1, false",
        "0.0.0.0/0, ::1, false",
    })
    void containsAddresses(String block, String address, boolean contained) {
        assertThat(Cidr.tryParse(block).contains(IpAddress.parse(address))).isEqualTo(contained);
        assertThat(Cidr.tryParse(block).network()).isEqualTo(IpAddress.parse(block.substring(0, block.indexOf('/'))));
    }
}
