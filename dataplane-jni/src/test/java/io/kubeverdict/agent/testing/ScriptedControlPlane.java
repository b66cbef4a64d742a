// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.proto.v1.AppliedAck;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A PolicySync server on a real loopback socket whose streams the test drives by hand: each Sync
 * call shows up as a {@link Stream} to send scripted messages on, end, or break.
 */
public final class ScriptedControlPlane implements AutoCloseable {
    private final BlockingQueue<Stream> streams = new LinkedBlockingQueue<>();
    private final BlockingQueue<AppliedReport> reports = new LinkedBlockingQueue<>();
    private final Server server;

    public ScriptedControlPlane() throws IOException {
        this(0);
    }

    public ScriptedControlPlane(int port) throws IOException {
        this(NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port)), null);
    }

    /** A control plane on a loopback port that speaks TLS with these credentials. */
    public static ScriptedControlPlane withCredentials(io.grpc.ServerCredentials credentials) throws IOException {
        return new ScriptedControlPlane(
                NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), credentials), null);
    }

    /** A control plane listening on 127.0.0.1:port inside the network namespace at netnsPath. */
    public static ScriptedControlPlane inNetns(String netnsPath, int port) throws IOException {
        EventLoopGroup loops = NetnsEventLoops.group(netnsPath, 2);
        return new ScriptedControlPlane(
                NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                        .bossEventLoopGroup(loops)
                        .workerEventLoopGroup(loops)
                        .channelType(NioServerSocketChannel.class)
                        // Calls run on the loops themselves: a thread started from a netns thread inherits
                        // its namespace, so handing calls to gRPC's shared executor would leave shared
                        // threads in this namespace for every later test of the JVM (their loopback fails).
                        .directExecutor(),
                loops);
    }

    private final EventLoopGroup loops;

    private ScriptedControlPlane(NettyServerBuilder builder, EventLoopGroup loops) throws IOException {
        this.loops = loops;
        server = builder.addService(new PolicySyncGrpc.PolicySyncImplBase() {
                    @Override
                    public void sync(SyncRequest request, StreamObserver<ToAgent> response) {
                        streams.add(new Stream(request, (ServerCallStreamObserver<ToAgent>) response));
                    }

                    @Override
                    public void reportApplied(AppliedReport request, StreamObserver<AppliedAck> response) {
                        reports.add(request);
                        response.onNext(AppliedAck.getDefaultInstance());
                        response.onCompleted();
                    }
                })
                .build()
                .start();
    }

    public int port() {
        return server.getPort();
    }

    public String target() {
        return "127.0.0.1:" + port();
    }

    /** The next Sync call the agent makes; fails the test after 10 s. */
    public Stream nextStream() throws InterruptedException {
        Stream s = streams.poll(10, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("the agent did not open a Sync stream within 10 s");
        }
        return s;
    }

    /** A Sync call opened within the timeout, or null. */
    public Stream pollStream(long millis) throws InterruptedException {
        return streams.poll(millis, TimeUnit.MILLISECONDS);
    }

    /** The next ReportApplied; fails after 30 s. */
    public AppliedReport nextReport() throws InterruptedException {
        AppliedReport r = reports.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no ReportApplied within 30 s");
        }
        return r;
    }

    /** Waits for a report of exactly this sequence, skipping older ones. */
    public AppliedReport awaitReport(long sequence) throws InterruptedException {
        while (true) {
            AppliedReport r = nextReport();
            if (r.getAppliedSequence() == sequence) {
                return r;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
        if (loops != null) {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** One open Sync call. */
    public static final class Stream {
        public final SyncRequest request;
        private final ServerCallStreamObserver<ToAgent> out;
        private volatile boolean cancelled;

        Stream(SyncRequest request, ServerCallStreamObserver<ToAgent> out) {
            this.request = request;
            this.out = out;
            out.setOnCancelHandler(() -> cancelled = true);
        }

        public synchronized Stream send(ToAgent... messages) {
            for (ToAgent m : messages) {
                out.onNext(m);
            }
            return this;
        }

        public synchronized void complete() {
            out.onCompleted();
        }

        public synchronized void fail(io.grpc.Status status) {
            out.onError(status.asRuntimeException());
        }

        /** Whether the agent cancelled this call (abandoned the stream). */
        public boolean cancelled() {
            return cancelled || out.isCancelled();
        }
    }
}
