// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.grpc.Channel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An agent played by a test: it reads its Sync stream and remembers each InSync, and reports
 * applied only when the test says so (a real agent reports once it enforced up to an InSync).
 */
public final class ReportingAgent implements AutoCloseable {
    private final Channel channel;
    private final String node;
    private final List<Long> inSyncs = new ArrayList<>();
    private ClientCallStreamObserver<SyncRequest> requests;

    private ReportingAgent(Channel channel, String node) {
        this.channel = channel;
        this.node = node;
        PolicySyncGrpc.newStub(channel)
                .sync(
                        SyncRequest.newBuilder().setNode(node).build(),
                        new ClientResponseObserver<SyncRequest, ToAgent>() {
                            @Override
                            public void beforeStart(ClientCallStreamObserver<SyncRequest> r) {
                                requests = r;
                            }

                            @Override
                            public void onNext(ToAgent value) {
                                if (value.hasInSync()) {
                                    synchronized (inSyncs) {
                                        inSyncs.add(value.getSequence());
                                    }
                                }
                            }

                            @Override
                            public void onError(Throwable t) {}

                            @Override
                            public void onCompleted() {}
                        });
    }

    /** Connects and waits (generously) for the first snapshot's InSync. */
    public static ReportingAgent connect(Channel channel, String node) throws InterruptedException {
        ReportingAgent a = new ReportingAgent(channel, node);
        a.awaitReceived(1);
        return a;
    }

    /** InSyncs received: the first snapshot's, then one per change. */
    public int received() {
        synchronized (inSyncs) {
            return inSyncs.size();
        }
    }

    public void awaitReceived(int n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (received() < n) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError(node + ": " + n + " InSyncs not received within 60 s (" + received() + ")");
            }
            Thread.sleep(10);
        }
    }

    private long inSync(int i) {
        synchronized (inSyncs) {
            return inSyncs.get(i);
        }
    }

    /** Reports everything up to the i-th InSync applied (0: the first snapshot). */
    public void apply(int i) {
        PolicySyncGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .reportApplied(AppliedReport.newBuilder()
                        .setNode(node)
                        .setAppliedSequence(inSync(i))
                        .build());
    }

    /** Reports everything received so far applied. */
    public void applyAll() {
        apply(received() - 1);
    }

    @Override
    public void close() {
        requests.cancel("test over", null);
    }
}
