package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressesTest {
    @ParameterizedTest
    @CsvSource({
        "10.0.0.1, 10.0.0.1",
        "::, ::",
        "::1, ::1",
        "FD00:0:0:0:0:0:0:1, fd00::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:0db8:0000:0000:0000:ff00:0042:8329, 2001:db8::ff00:42:8329",
        "1:0:1:0:1:0:1:0, 1:0:1:0:1:0:1:0",
        "::ffff:1.2.3.4, ::ffff:102:304",
    })
    void canonical(String in, String out) {
        assertThat(IpAddresses.canonical(in)).contains(out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1:2", "1::2::3", "::g", "1:2:3:4:5:6:7:8:9",
        "fe80::1%eth0", "example.com", "1.2.3.4::"})
    void rejects(String in) {
        assertThat(IpAddresses.canonical(in)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"10.1.2.3/8, 10.0.0.0/8", "0.0.0.0/0, 0.0.0.0/0", "fd00::1/64, fd00::/64", "10.0.0.1/32, 10.0.0.1/32",
        "10.0.0.255/25, 10.0.0.128/25"})
    void cidrsAreNormalised(String in, String out) {
        assertThat(IpAddresses.parseCidr(in)).hasValueSatisfying(c -> assertThat(c.toString()).isEqualTo(out));
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.0", "10.0.0.0/33", "10.0.0.0/", "/8", "fd00::/129", "10.0.0.0/08", "10.0.0.0/-1"})
    void rejectsCidrs(String in) {
        assertThat(IpAddresses.parseCidr(in)).isEmpty();
    }
}
