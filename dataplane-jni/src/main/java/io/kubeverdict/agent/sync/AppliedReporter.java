// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.proto.v1.AppliedAck;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the control plane what the kernel enforces, via ReportApplied. At most one report is in
 * flight; sequences applied meanwhile collapse into the newest, so a slow control plane never
 * makes the sync thread wait or reports pile up.
 */
public final class AppliedReporter implements AppliedListener {
    private static final Logger log = LoggerFactory.getLogger(AppliedReporter.class);

    private final PolicySyncGrpc.PolicySyncStub stub;
    private final String node;
    private final String agentVersion;
    private boolean inFlight;
    private long pending = -1;

    public AppliedReporter(Channel channel, String node, String agentVersion) {
        this.stub = PolicySyncGrpc.newStub(channel);
        this.node = node;
        this.agentVersion = agentVersion;
    }

    @Override
    public void applied(long sequence, long eventTimeUnixNanos) {
        long toSend;
        synchronized (this) {
            pending = sequence;
            if (inFlight) {
                return;
            }
            inFlight = true;
            toSend = pending;
            pending = -1;
        }
        send(toSend);
    }

    private void send(long sequence) {
        AppliedReport report = AppliedReport.newBuilder()
                .setNode(node)
                .setAppliedSequence(sequence)
                .setAgentVersion(agentVersion)
                .build();
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).reportApplied(report, new StreamObserver<>() {
            @Override
            public void onNext(AppliedAck ack) {}

            @Override
            public void onError(Throwable t) {
                if (SyncClient.refusal(t) != null) {
                    // Refused for this node (identity, wrong node): nothing retries it by itself.
                    log.warn(
                            "the control plane REFUSED ReportApplied({}) of node {}: {}", sequence, node, t.toString());
                } else {
                    log.debug("ReportApplied({}) failed: {}", sequence, t.toString());
                }
                done();
            }

            @Override
            public void onCompleted() {
                done();
            }
        });
    }

    private void done() {
        long next;
        synchronized (this) {
            if (pending < 0) {
                inFlight = false;
                return;
            }
            next = pending;
            pending = -1;
        }
        send(next);
    }
}
