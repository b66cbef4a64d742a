package io.kubeverdict.agent.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AddressesTest {

    @ParameterizedTest
    @CsvSource({
            "10.0.0.1, 10.0.0.1",
            "255.255.255.255, 255.255.255.255",
            "fd00::1, fd00::1",
            "FD00:0:0:0:0:0:0:1, fd00::1",
            "::, ::",
            "::1, ::1",
            "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
            "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
            "1:0:2:0:3:0:4:0, 1:0:2:0:3:0:4:0",
            "fd00:1:2:3:4:5:6::, fd00:1:2:3:4:5:6:0",
            "fd00::, fd00::",
    })
    void canonicalFormFollowsRfc5952(String in, String expected) {
        assertThat(Addresses.canonical(in)).isEqualTo(expected);
    }

    @Test
    void nonAddressesAreRejectedWithoutDns() {
        assertThat(Addresses.canonical("example.com")).isNull();
        assertThat(Addresses.canonical("")).isNull();
        assertThat(Addresses.canonical(null)).isNull();
        assertThat(Addresses.canonical("10.0.0.300")).isNull();
    }
}
