// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * N simulated agents, one plaintext loopback Sync stream each (node-0 .. node-N-1, split evenly
 * over one or more control plane replicas), that keep no
 * state and only note, after {@link #arm}, when each first receives a delta (System.nanoTime of
 * this JVM). Messages are delivered on the channel's event loop (direct executor): a real agent
 * runs on another node, so the simulated ones should cost the shared CPUs as little as possible.
 */
final class SimulatedAgents implements AutoCloseable {
    private final List<Agent> agents = new ArrayList<>();
    private final AtomicLongArray first;
    private final AtomicInteger remaining = new AtomicInteger();
    private final Runnable onComplete;
    private volatile boolean armed;

    private SimulatedAgents(int n, Runnable onComplete) {
        this.first = new AtomicLongArray(n);
        this.onComplete = onComplete;
    }

    /** Connects the agents and returns once every one is in sync. */
    static SimulatedAgents connect(int port, int n, Runnable onComplete) throws InterruptedException {
        return connect(new int[] {port}, n, onComplete);
    }

    /**
     * Connects {@code perServer} agents to each server (control plane replica), node-0 .. on the
     * first, the next {@code perServer} nodes on the second ..., and returns once every one is in sync.
     */
    static SimulatedAgents connect(int[] ports, int perServer, Runnable onComplete) throws InterruptedException {
        int n = ports.length * perServer;
        SimulatedAgents set = new SimulatedAgents(n, onComplete);
        CountDownLatch inSync = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            set.agents.add(set.new Agent(ports[i / perServer], i, inSync));
        }
        if (!inSync.await(30, TimeUnit.MINUTES)) {
            throw new IllegalStateException("agents did not get in sync");
        }
        return set;
    }

    /** Forgets earlier arrivals; {@code onComplete} runs once every agent has had a delta since. */
    void arm() {
        armed = false;
        for (int i = 0; i < first.length(); i++) {
            first.set(i, 0);
        }
        remaining.set(first.length());
        armed = true;
    }

    /** First delta arrival per agent since {@link #arm} (System.nanoTime), 0 where none came. */
    long[] arrivals() {
        long[] out = new long[first.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = first.get(i);
        }
        return out;
    }

    private void arrived(int index) {
        if (armed
                && first.compareAndSet(index, 0, Math.max(1, System.nanoTime()))
                && remaining.decrementAndGet() == 0) {
            onComplete.run();
        }
    }

    @Override
    public void close() {
        agents.forEach(Agent::close);
    }

    private final class Agent implements ClientResponseObserver<SyncRequest, ToAgent> {
        private final int index;
        private final ManagedChannel channel;
        private final CountDownLatch inSyncLatch;
        private volatile boolean inSync;
        private volatile boolean closing;
        private ClientCallStreamObserver<SyncRequest> call;

        Agent(int port, int index, CountDownLatch inSyncLatch) {
            this.index = index;
            this.inSyncLatch = inSyncLatch;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                    .usePlaintext()
                    .directExecutor()
                    .maxInboundMessageSize(8 << 20)
                    .build();
            PolicySyncGrpc.newStub(channel)
                    .sync(
                            SyncRequest.newBuilder()
                                    .setNode("node-" + index)
                                    .setAgentVersion("bench")
                                    .build(),
                            this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(ToAgent m) {
            if (m.hasInSync()) {
                if (!inSync) {
                    inSync = true;
                    inSyncLatch.countDown();
                }
            } else if (inSync) {
                arrived(index);
            }
        }

        @Override
        public void onError(Throwable t) {
            if (!closing) {
                System.err.println("node-" + index + ": " + t);
            }
        }

        @Override
        public void onCompleted() {}

        void close() {
            closing = true;
            call.cancel("bench done", null);
            channel.shutdownNow();
        }
    }
}
