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
 * @param executorThreads threads that run call handlers (gRPC's default is an unbounded cached pool:
 *     a flood of calls that block, e.g. on a TokenReview, would become as many threads). Work beyond
 *     them waits in line; it is not refused there, because gRPC leaves an admitted call hanging
 *     when a later task of it is refused (seen with grpc-java 1.85). What may wait is bounded by
 *     the transport (calls per connection) and costs little once authentication is cheap to refuse.
 */
public record ServerLimits(
        int maxInboundMessageBytes,
        int maxInboundMetadataBytes,
        Duration handshakeTimeout,
        Duration maxConnectionIdle,
        int maxConcurrentCallsPerConnection,
        int executorThreads) {
    public static final int DEFAULT_MAX_INBOUND_MESSAGE_BYTES = 1 << 20;
    /**
     * Handlers do little but look up state and hand work to other threads; what blocks (a token
     * review, a SubjectAccessReview) is capped by the control plane on its own, well below this.
     */
    public static final int DEFAULT_EXECUTOR_THREADS = 32;

    public ServerLimits {
        if (maxInboundMessageBytes < 1024
                || maxInboundMetadataBytes < 8 * 1024
                || maxConcurrentCallsPerConnection < 4) {
            throw new IllegalArgumentException("limits too small to serve our own clients: " + maxInboundMessageBytes
                    + " B messages, " + maxInboundMetadataBytes + " B metadata, " + maxConcurrentCallsPerConnection
                    + " calls per connection");
        }
        if (handshakeTimeout.isNegative()
                || handshakeTimeout.isZero()
                || maxConnectionIdle.isNegative()
                || maxConnectionIdle.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
        if (executorThreads < 2) {
            throw new IllegalArgumentException("the call executor needs at least 2 threads: " + executorThreads);
        }
    }

    public static ServerLimits defaults() {
        return new ServerLimits(
                DEFAULT_MAX_INBOUND_MESSAGE_BYTES,
                32 * 1024,
                Duration.ofSeconds(10),
                Duration.ofMinutes(5),
                4096,
                DEFAULT_EXECUTOR_THREADS);
    }

    public ServerLimits withMaxInboundMessageBytes(int bytes) {
        return new ServerLimits(
                bytes,
                maxInboundMetadataBytes,
                handshakeTimeout,
                maxConnectionIdle,
                maxConcurrentCallsPerConnection,
                executorThreads);
    }

    public ServerLimits withTimeouts(Duration handshake, Duration idle) {
        return new ServerLimits(
                maxInboundMessageBytes,
                maxInboundMetadataBytes,
                handshake,
                idle,
                maxConcurrentCallsPerConnection,
                executorThreads);
    }

    public ServerLimits withExecutorThreads(int threads) {
        return new ServerLimits(
                maxInboundMessageBytes,
                maxInboundMetadataBytes,
                handshakeTimeout,
                maxConnectionIdle,
                maxConcurrentCallsPerConnection,
                threads);
    }
}
