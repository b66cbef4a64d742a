// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    @ParameterizedTest
    @CsvSource({
        "10.0.0.1, 10.0.0.1",
        "0.0.0.0, 0.0.0.0",
        "255.255.255.255, 255.255.255.255",
        "::, ::",
        "::1, ::1",
        "FD00::0001, fd00::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:0db8:0000:0000:0000:0000:0002:0001, 2001:db8::2:1",
        "1:0:0:2:0:0:0:3, 1:0:0:2::3",
        "::ffff:10.1.2.3, ::ffff:a01:203",
        "1::, 1::",
        "1:2:3:4:5:6:7:8, 1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6::8, 1:2:3:4:5:6:0:8",
        "FD00:0:0:0:0:0:0:1, fd00::1",
        "2001:0db8:0000:0000:0000:ff00:0042:8329, 2001:db8::ff00:42:8329",
        "1:0:1:0:1:0:1:0, 1:0:1:0:1:0:1:0",
        "::ffff:1.2.3.4, ::ffff:102:304",
    })
    void parsesAndFormatsCanonically(String text, String canonical) {
        assertThat(IpAddress.parse(text).toString()).isEqualTo(canonical);
        assertThat(IpAddress.canonical(text)).contains(canonical);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "bogus",
                "10.0.0",
                "10.0.0.1.2",
                "10.0.0.256",
                "010.0.0.1",
                "10..0.1",
                "10.0.0.1 ",
                "1:2:3:4:5:6:7:8:9",
                "1::2::3",
                ":1::2",
                "1:2:3:4:5:6:7:",
                "12345::",
                "fe80::1%eth0",
                "::ffff:1.2.3",
                "g::1",
                "1:2:3:4:5:6:7::8",
                "localhost",
                "1.2.3",
                "1:2",
                "1.2.3.4::",
                "example.com",
                "::g"
            })
    void rejectsNonLiterals(String text) {
        assertThat(IpAddress.tryParse(text)).isNull();
        assertThat(IpAddress.canonical(text)).isEmpty();
        assertThatThrownBy(() -> IpAddress.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void canonicalOfNothingIsEmpty() {
        assertThat(IpAddress.canonical(null)).isEmpty();
    }

    @Test
    void agreesWithTheJdkOnRandomAddresses() throws Exception {
        Random random = new Random(42);
        for (int i = 0; i < 2000; i++) {
            byte[] bytes = new byte[i % 2 == 0 ? 4 : 16];
            random.nextBytes(bytes);
            if (i % 7 == 0 && bytes.length == 16) {
                for (int k = 4; k < 12; k++) {
                    bytes[k] = 0; // zero runs exercise "::"
                }
            }
            InetAddress jdk = InetAddress.getByAddress(bytes);
            IpAddress ours = IpAddress.parse(jdk.getHostAddress());
            assertThat(IpAddress.parse(ours.toString())).isEqualTo(ours);
            assertThat(InetAddress.getByName(ours.toString())).isEqualTo(jdk);
        }
    }
}
