// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import java.time.Duration;

/**
 * What one connection may cost a server, whoever opens it. Our own clients stay far inside these
 * (the agent's largest message is a verdict batch of 256 events, ~100 KiB; its tokens are ~1 KiB;
 * it pings every 30 s and always holds a Sync stream), so only misuse meets them.
 *
 * @param maxInboundMessageBytes a larger request is refused (RESOURCE_EXHAUSTED) before it is parsed
 * @param maxInboundMetadataBytes headers, a bearer token among them
 * @param handshakeTimeout a connection that has not finished TLS and the HTTP/2 preface by then is
 *     closed: silent sockets and garbage hold nothing for long
 * @param maxConnectionIdle a connection without calls for this long is closed (clients reconnect
 *     on their next call)
 * @param maxConcurrentCallsPerConnection HTTP/2 streams one connection may have open (bounds what
 *     one connection holds; who may hold how many streams is the control plane's per-caller limit)
 */
public record ServerLimits(int maxInboundMessageBytes, int maxInboundMetadataBytes, Duration handshakeTimeout,
        Duration maxConnectionIdle, int maxConcurrentCallsPerConnection) {
    public static final int DEFAULT_MAX_INBOUND_MESSAGE_BYTES = 1 << 20;

    public ServerLimits {
        if (maxInboundMessageBytes < 1024 || maxInboundMetadataBytes < 8 * 1024 || maxConcurrentCallsPerConnection < 4) {
            throw new IllegalArgumentException("limits too small to serve our own clients: " + maxInboundMessageBytes
                    + " B messages, " + maxInboundMetadataBytes + " B metadata, " + maxConcurrentCallsPerConnection
                    + " calls per connection");
        }
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero() || maxConnectionIdle.isNegative()
                || maxConnectionIdle.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
    }

    public static ServerLimits defaults() {
        return new ServerLimits(DEFAULT_MAX_INBOUND_MESSAGE_BYTES, 32 * 1024, Duration.ofSeconds(10),
                Duration.ofMinutes(5), 4096);
    }

    public ServerLimits withMaxInboundMessageBytes(int bytes) {
        return new ServerLimits(bytes, maxInboundMetadataBytes, handshakeTimeout, maxConnectionIdle,
                maxConcurrentCallsPerConnection);
    }

    public ServerLimits withTimeouts(Duration handshake, Duration idle) {
        return new ServerLimits(maxInboundMessageBytes, maxInboundMetadataBytes, handshake, idle,
                maxConcurrentCallsPerConnection);
    }
}
