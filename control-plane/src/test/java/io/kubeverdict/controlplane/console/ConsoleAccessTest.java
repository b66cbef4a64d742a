// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The console's gate and the browser address it hands the in-process server. */
class ConsoleAccessTest {
    private static InetSocketAddress at(String ip) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(ip), 40000);
    }

    @Test
    void withoutTokenReviewOnlyLoopbackIsLetIn() throws Exception {
        ConsoleAccess none = new ConsoleAccess(false);
        assertThat(none.decide(null, at("127.0.0.1"), "localhost:9180").viewer())
                .isNotNull();
        assertThat(none.decide(null, at("::1"), "[::1]:9180").viewer()).isNotNull();
        assertThat(none.decide(null, at("10.0.0.7"), "10.0.0.1:9180").status()).isEqualTo(401);
        assertThat(none.decide("Bearer x", at("10.0.0.7"), "10.0.0.1:9180").status())
                .isEqualTo(401);
    }

    @Test
    void withTokenReviewATokenIsPassedOnForReviewFromAnywhere() throws Exception {
        ConsoleAccess tokens = new ConsoleAccess(true);
        ConsoleAccess.Decision d = tokens.decide("Bearer abc", at("10.0.0.7"), "console.example:9180");
        assertThat(d.viewer()).isEqualTo(new Viewer("Bearer abc", at("10.0.0.7")));
        assertThat(tokens.decide(null, at("10.0.0.7"), "10.0.0.1").status()).isEqualTo(401);
    }

    @Test
    void aLoopbackRequestMustNameALoopbackOrLiteralHost() throws Exception {
        ConsoleAccess none = new ConsoleAccess(false);
        assertThat(none.decide(null, at("127.0.0.1"), "rebound.example:9180").status())
                .isEqualTo(403);
        assertThat(none.decide(null, at("127.0.0.1"), null).status()).isEqualTo(403);
        assertThat(ConsoleAccess.loopbackHost("LOCALHOST")).isTrue();
        assertThat(ConsoleAccess.loopbackHost("127.0.0.1:9180")).isTrue();
        assertThat(ConsoleAccess.loopbackHost("[fd00::1]:80")).isTrue();
        assertThat(ConsoleAccess.loopbackHost("localhost.attacker.example")).isFalse();
        assertThat(ConsoleAccess.loopbackHost("[::1")).isFalse();
    }

    @Test
    void thePeerHeaderCarriesOnlyLiteralAddresses() throws Exception {
        InetSocketAddress peer = at("10.1.2.3");
        assertThat(ConsolePeerInterceptor.parse(ConsolePeerInterceptor.format(peer)))
                .isEqualTo(peer);
        InetSocketAddress v6 = at("fd00::5");
        assertThat(ConsolePeerInterceptor.parse(ConsolePeerInterceptor.format(v6)))
                .isEqualTo(v6);
        assertThat(ConsolePeerInterceptor.parse("localhost 80"))
                .as("no name lookup")
                .isNull();
        assertThat(ConsolePeerInterceptor.parse("10.1.2.3")).isNull();
        assertThat(ConsolePeerInterceptor.parse("10.1.2.3 port")).isNull();
        assertThat(ConsolePeerInterceptor.parse(null)).isNull();
    }
}
