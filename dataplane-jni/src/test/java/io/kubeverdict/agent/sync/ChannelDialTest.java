// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ChannelDialTest {
    private static final Duration BOUND = Duration.ofMillis(200);

    @Test
    void aPortNobodyListensOnIsNotReadyEveryTimeAndAServerThereIsFoundAtOnce() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + port)
                .usePlaintext()
                .build();
        try {
            // Each dial dials again (the channel's own backoff would wait a second, then longer).
            for (int i = 0; i < 3; i++) {
                assertThat(ChannelDial.dial(channel, BOUND)).isEqualTo(ChannelDial.Outcome.NOT_READY);
            }
            try (ScriptedControlPlane cp = new ScriptedControlPlane(port)) {
                // Generous: the first connection of this JVM's Netty; a dial that did not happen would wait a second.
                assertThat(ChannelDial.dial(channel, Duration.ofSeconds(30))).isEqualTo(ChannelDial.Outcome.READY);
                assertThat(ChannelDial.dial(channel, BOUND))
                        .as("an established connection")
                        .isEqualTo(ChannelDial.Outcome.READY);
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void eachDialConnectsAgain() throws Exception {
        // A listener that speaks no HTTP/2: every dial is one accepted connection that never gets READY.
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!listener.isClosed()) {
                    try (Socket s = listener.accept()) {
                        accepted.incrementAndGet();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + listener.getLocalPort())
                    .usePlaintext()
                    .build();
            try {
                for (int i = 0; i < 10; i++) {
                    assertThat(ChannelDial.dial(channel, BOUND)).isEqualTo(ChannelDial.Outcome.NOT_READY);
                }
                // The channel's own backoff (1 s, x1.6 each time) would have dialled about 5 times in 10 s.
                SyncClientTest.await(() -> accepted.get() >= 10);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aChannelThatIsShutDownOrNotManagedIsNotKnown() throws Exception {
        ManagedChannel channel =
                NettyChannelBuilder.forTarget("127.0.0.1:1").usePlaintext().build();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        assertThat(ChannelDial.dial(channel, BOUND)).isEqualTo(ChannelDial.Outcome.UNKNOWN);
        io.grpc.Channel plain = io.grpc.ClientInterceptors.intercept(channel);
        assertThat(ChannelDial.dial(plain, BOUND)).isEqualTo(ChannelDial.Outcome.UNKNOWN);
    }
}
