// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gRPC server of both processes: the given services plus grpc.health.v1 and server reflection
 * in both protocol versions (v1 for current grpcurl, v1alpha for older clients), optionally behind
 * mutual TLS, within {@link ServerLimits}. Health reports NOT_SERVING for "" and every given service until {@link #setServing}.
 * Handlers run on a fixed pool of our own ({@link ServerLimits#executorThreads}), not gRPC's default
 * unbounded cached one: a flood of calls waits in line instead of costing a thread each.
 */
public final class GrpcServer implements AutoCloseable {
    /** How long running calls may finish at close before they are cancelled (long streams are). */
    private static final long SHUTDOWN_GRACE_MILLIS = 2_000;

    private final HealthStatusManager health = new HealthStatusManager();
    private final List<String> healthNames = new ArrayList<>();
    private final Server server;
    private final ThreadPoolExecutor executor;
    private TlsFileReloads tlsReloads;
    private boolean closed;

    private GrpcServer(Builder b) throws IOException {
        ServerCredentials credentials = InsecureServerCredentials.create();
        if (b.tls != null) {
            ServerTls.Opened opened = b.tls.open();
            tlsReloads = opened.reloads();
            credentials = opened.credentials();
        }
        executor = callExecutor(b.limits);
        NettyServerBuilder nb = NettyServerBuilder.forAddress(b.listen, credentials)
                .executor(executor)
                // Sync and WatchVerdicts streams stay open for days: notice dead peers, and let
                // clients ping (the agent does every 30 s, also between calls).
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxInboundMessageSize(b.limits.maxInboundMessageBytes())
                .maxInboundMetadataSize(b.limits.maxInboundMetadataBytes())
                .handshakeTimeout(b.limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .maxConnectionIdle(b.limits.maxConnectionIdle().toMillis(), TimeUnit.MILLISECONDS)
                .maxConcurrentCallsPerConnection(b.limits.maxConcurrentCallsPerConnection());
        healthNames.add(HealthStatusManager.SERVICE_NAME_ALL_SERVICES);
        for (ServerServiceDefinition s : b.services) {
            nb.addService(s);
            healthNames.add(s.getServiceDescriptor().getName());
        }
        nb.addService(health.getHealthService());
        nb.addService(ProtoReflectionServiceV1.newInstance());
        nb.addService(v1alphaReflection());
        server = nb.build();
        setServing(false);
    }

    /** Daemon threads, named for thread dumps; idle ones end after a minute. */
    private static ThreadPoolExecutor callExecutor(ServerLimits limits) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                limits.executorThreads(),
                limits.executorThreads(),
                60,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "grpc-call-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    @SuppressWarnings("deprecation") // v1alpha is deprecated but still what some clients speak
    private static BindableService v1alphaReflection() {
        return ProtoReflectionService.newInstance();
    }

    public static Builder builder(InetSocketAddress listen) {
        return new Builder(listen);
    }

    public GrpcServer start() throws IOException {
        server.start();
        return this;
    }

    /** The bound port (the real one when asked for port 0). */
    public int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    public List<? extends SocketAddress> listenSockets() {
        return server.getListenSockets();
    }

    /** grpc.health.v1 status of "" and of every service this server was built with. */
    public void setServing(boolean serving) {
        ServingStatus status = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        for (String name : healthNames) {
            health.setStatus(name, status);
        }
    }

    /**
     * Health says NOT_SERVING for good, new calls are refused, running ones get a moment to end,
     * then the rest (open streams) are cancelled. Closing again does nothing.
     */
    @Override
    public synchronized void close() throws InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        health.enterTerminalState();
        server.shutdown();
        try {
            if (!server.awaitTermination(SHUTDOWN_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } finally {
            executor.shutdownNow();
            if (tlsReloads != null) {
                tlsReloads.close();
            }
        }
    }

    public static final class Builder {
        private final InetSocketAddress listen;
        private final List<ServerServiceDefinition> services = new ArrayList<>();
        private ServerTls tls;
        private ServerLimits limits = ServerLimits.defaults();

        private Builder(InetSocketAddress listen) {
            this.listen = listen;
        }

        /** null: plaintext. */
        public Builder tls(ServerTls tls) {
            this.tls = tls;
            return this;
        }

        public Builder limits(ServerLimits limits) {
            this.limits = limits;
            return this;
        }

        public Builder service(BindableService service) {
            return service(service.bindService());
        }

        /** A service as bound, e.g. wrapped with {@code ServerInterceptors.intercept}. */
        public Builder service(ServerServiceDefinition service) {
            services.add(service);
            return this;
        }

        /** Builds the server (reading the TLS files); {@link GrpcServer#start} binds it. */
        public GrpcServer build() throws IOException {
            return new GrpcServer(this);
        }
    }
}
