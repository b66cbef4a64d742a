// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import com.google.protobuf.ByteString;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test agent on a real gRPC channel: collects its Sync stream into an {@link AgentView}. With
 * {@code autoRead} off it asks for one message and then nothing until {@link #request} (a stuck agent).
 */
public final class TestAgent implements AutoCloseable {
    private static final long WAIT_SECONDS = 30;

    final AgentView view = new AgentView();
    private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private volatile ClientCallStreamObserver<SyncRequest> call;
    private final String node;
    /** The state offered to resume from, or null. */
    private NodeSnapshot offered;

    private TestAgent(String node) {
        this.node = node;
    }

    public static TestAgent connect(Channel channel, String node, boolean autoRead) {
        return connect(channel, node, autoRead, "test");
    }

    public static TestAgent connect(Channel channel, String node, boolean autoRead, String agentVersion) {
        return connect(PolicySyncGrpc.newStub(channel), node, autoRead, agentVersion);
    }

    /** As an agent reconnects: the call waits until the channel is connected instead of failing fast. */
    public static TestAgent connectWhenReady(Channel channel, String node) {
        return connect(PolicySyncGrpc.newStub(channel).withWaitForReady(), node, true, "test");
    }

    /**
     * As an agent that enforces {@code enforced} reconnects: its request carries that state's digest,
     * and a resumed InSync as the first message makes the view start from it.
     */
    public static TestAgent resume(Channel channel, String node, NodeSnapshot enforced) {
        return connect(PolicySyncGrpc.newStub(channel), node, true, "test", enforced);
    }

    private static TestAgent connect(
            PolicySyncGrpc.PolicySyncStub stub, String node, boolean autoRead, String agentVersion) {
        return connect(stub, node, autoRead, agentVersion, null);
    }

    private static TestAgent connect(
            PolicySyncGrpc.PolicySyncStub stub,
            String node,
            boolean autoRead,
            String agentVersion,
            NodeSnapshot enforced) {
        TestAgent a = new TestAgent(node);
        a.offered = enforced;
        stub.sync(
                SyncRequest.newBuilder()
                        .setNode(node)
                        .setAgentVersion(agentVersion)
                        .setResumeDigest(enforced == null ? ByteString.EMPTY : SnapshotDigest.of(enforced))
                        .build(),
                new ClientResponseObserver<SyncRequest, ToAgent>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
                        a.call = requestStream;
                        if (!autoRead) {
                            requestStream.disableAutoRequestWithInitial(1);
                        }
                    }

                    @Override
                    public void onNext(ToAgent value) {
                        a.inbox.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        a.inbox.add(t);
                    }

                    @Override
                    public void onCompleted() {
                        a.inbox.add(Status.OK);
                    }
                });
        return a;
    }

    public String node() {
        return node;
    }

    /** Whether InSync has been read. */
    public boolean inSync() {
        return view.inSync;
    }

    public void request(int n) {
        call.request(n);
    }

    /** The next message, applied to the view; fails on an error or after a long wait. */
    public ToAgent next() throws InterruptedException {
        Object o = inbox.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (o == null) {
            throw new AssertionError("no message within " + WAIT_SECONDS + "s; state: " + view.toSnapshot("?"));
        }
        if (o instanceof ToAgent m) {
            if (m.hasInSync() && m.getInSync().getResumed()) {
                if (offered == null || !view.received.isEmpty()) {
                    throw new AssertionError("a resumed InSync that answers no offer or is not first: " + m);
                }
                view.seed(offered);
            }
            view.accept(m);
            return m;
        }
        throw new AssertionError("stream ended: " + o, o instanceof Throwable t ? t : null);
    }

    /**
     * The next message that changes the state, after InSync: the InSyncs that end each change are
     * read (and counted in {@link #boundaries()}) but skipped.
     */
    public ToAgent nextDelta() throws InterruptedException {
        while (true) {
            ToAgent m = next();
            if (!m.hasInSync()) {
                return m;
            }
        }
    }

    /** Reads through the InSync marker. */
    public void readUntilInSync() throws InterruptedException {
        while (!view.inSync) {
            next();
        }
    }

    /**
     * Reads until the view equals {@code expected} (order-insensitive) at a complete state: the
     * InSync that ends the snapshot or the change is read too, as an agent enforces it.
     */
    public void readUntil(NodeSnapshot expected) throws InterruptedException {
        NodeSnapshot want = AgentView.canonical(expected);
        while (!(atBoundary() && view.toSnapshot(expected.getNode()).equals(want))) {
            next();
        }
    }

    /** Whether the last message read was an InSync (the end of the snapshot or of a change). */
    private boolean atBoundary() {
        return !view.received.isEmpty()
                && view.received.get(view.received.size() - 1).hasInSync();
    }

    /** Reads (applying messages) until the stream ends; returns how it ended. */
    public Status readUntilEnd() throws InterruptedException {
        while (true) {
            Object o = inbox.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            if (o == null) {
                throw new AssertionError("stream did not end within " + WAIT_SECONDS + "s");
            }
            if (o instanceof ToAgent m) {
                view.accept(m);
            } else if (o instanceof Status s) {
                return s;
            } else {
                return Status.fromThrowable((Throwable) o);
            }
        }
    }

    /** Messages that arrived and are waiting to be read. */
    public int buffered() {
        return inbox.size();
    }

    /** Messages received after InSync, without the InSyncs that end each change. */
    public java.util.List<ToAgent> deltas() {
        return java.util.List.copyOf(view.deltas);
    }

    /** The InSyncs received after the first: one per change. */
    public java.util.List<ToAgent> boundaries() {
        return java.util.List.copyOf(view.boundaries);
    }

    public NodeSnapshot state(String node) {
        return view.toSnapshot(node);
    }

    @Override
    public void close() {
        if (call != null) {
            call.cancel("test done", null);
        }
    }
}
