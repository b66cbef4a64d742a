// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostPortTest {

    @ParameterizedTest(name = "listen {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // text            | host            | port  | canonical
                "0.0.0.0:9443      | 0.0.0.0         | 9443  | 0.0.0.0:9443",
                ":9101             | ''              | 9101  | :9101",
                "127.0.0.1:0       | 127.0.0.1       | 0     | 127.0.0.1:0",
                "[::1]:80          | ::1             | 80    | [::1]:80",
                "[::]:9102         | ::              | 9102  | [::]:9102",
                "[2001:DB8:0::1]:1 | 2001:db8::1     | 1     | [2001:db8::1]:1",
                "localhost:65535   | localhost       | 65535 | localhost:65535",
                "cp.kube-verdict.svc:9443 | cp.kube-verdict.svc | 9443 | cp.kube-verdict.svc:9443",
            })
    void listenAddresses(String text, String host, int port, String canonical) {
        HostPort hp = HostPort.parseListen(text);
        assertThat(hp).isEqualTo(new HostPort(host, port));
        assertThat(hp.toString()).isEqualTo(canonical);
        assertThat(HostPort.parseListen(hp.toString())).isEqualTo(hp);
    }

    @ParameterizedTest(name = "listen {0} is refused")
    @CsvSource(
            delimiter = '|',
            value = {
                "9102              | HOST:PORT",
                "''                | empty",
                "' '               | empty",
                "::1:80            | needs brackets",
                "::                | needs brackets",
                "[::1]80           | [IPv6]:PORT",
                "[::1              | [IPv6]:PORT",
                "[::1]:            | bad port",
                "[10.0.0.1]:80     | not an IPv6",
                "[fe80::1%eth0]:80 | not an IPv6",
                "0.0.0.0:65536     | out of range 0-65535",
                "0.0.0.0:-1        | bad port",
                "0.0.0.0:+80       | bad port",
                "0.0.0.0:123456    | bad port",
                "0.0.0.0:http      | bad port",
                "0.0.0.0:          | bad port",
                "'0.0.0.0: 80'     | bad port",
                "256.0.0.1:80      | not an IPv4",
                "10.0.0:80         | not an IPv4",
                "010.0.0.1:80      | not an IPv4",
                "-cp:80            | not a host name",
                "cp_1:80           | not a host name",
                "a..b:80           | not a host name",
                "'my host:80'      | not a host name",
            })
    void badListenAddresses(String text, String message) {
        assertThatThrownBy(() -> HostPort.parseListen(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @ParameterizedTest(name = "target {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "cp:9443     | cp:9443",
                "10.0.0.1:1  | 10.0.0.1:1",
                "[::1]:443   | [::1]:443",
            })
    void targets(String text, String canonical) {
        assertThat(HostPort.parseTarget(text).toString()).isEqualTo(canonical);
    }

    @ParameterizedTest(name = "target {0} is refused")
    @CsvSource(
            delimiter = '|',
            value = {
                ":9443        | with a host",
                "cp:0         | out of range 1-65535",
                "cp           | HOST:PORT",
                "::1:443      | needs brackets",
            })
    void badTargets(String text, String message) {
        assertThatThrownBy(() -> HostPort.parseTarget(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @ParameterizedTest(name = "{0} binds {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "127.0.0.1:9 | 127.0.0.1",
                "[::1]:9     | 0:0:0:0:0:0:0:1",
            })
    void literalsBindWithoutLookup(String text, String address) {
        InetSocketAddress a = HostPort.parseListen(text).socketAddress();
        assertThat(a.isUnresolved()).isFalse();
        assertThat(a.getAddress().getHostAddress()).isEqualTo(address);
        assertThat(a.getPort()).isEqualTo(9);
    }

    @org.junit.jupiter.api.Test
    void noHostBindsEveryLocalAddress() {
        InetSocketAddress a = HostPort.parseListen(":9100").socketAddress();
        assertThat(a.getAddress().isAnyLocalAddress()).isTrue();
        assertThat(a.getPort()).isEqualTo(9100);
    }

    @org.junit.jupiter.api.Test
    void offDisablesOnlyWhereAllowed() {
        assertThat(new HostPort.ListenOrOff().convert("off")).isNull();
        assertThat(new HostPort.ListenOrOff().convert("")).isNull();
        assertThat(new HostPort.ListenOrOff().convert(":1")).isEqualTo(new HostPort("", 1));
        assertThatThrownBy(() -> new HostPort.Listen().convert("off"))
                .isInstanceOf(picocli.CommandLine.TypeConversionException.class)
                .hasMessageContaining("HOST:PORT");
    }
}
