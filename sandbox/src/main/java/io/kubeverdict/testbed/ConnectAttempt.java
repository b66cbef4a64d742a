// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * One TCP connection opened from a pod of a testbed, timed from the connect call (the first SYN
 * leaves) to its end: established, refused, or given up after the timeout (a SYN dropped every
 * time). The socket is closed at once.
 *
 * @param startNanos {@link System#nanoTime()} just before the connect call
 * @param endNanos when it was established or gave up
 * @param failure null when established, else what happened (e.g. "timeout", "Connection refused")
 */
public record ConnectAttempt(long startNanos, long endNanos, String failure) {
    public boolean connected() {
        return failure == null;
    }

    public double millis() {
        return (endNanos - startNanos) / 1e6;
    }

    /** Connects from pod's namespace (on a thread inside it) to an address; blocks up to timeout. */
    public static ConnectAttempt from(Testbed bed, String pod, InetSocketAddress to, Duration timeout)
            throws Exception {
        return bed.callIn(bed.layout().podNamespace(pod), () -> {
            try (SocketChannel channel = SocketChannel.open()) {
                long start = System.nanoTime();
                try {
                    channel.socket().connect(to, (int) timeout.toMillis());
                    return new ConnectAttempt(start, System.nanoTime(), null);
                } catch (SocketTimeoutException e) {
                    return new ConnectAttempt(start, System.nanoTime(), "timeout");
                } catch (IOException e) {
                    return new ConnectAttempt(start, System.nanoTime(), String.valueOf(e.getMessage()));
                }
            }
        });
    }
}
