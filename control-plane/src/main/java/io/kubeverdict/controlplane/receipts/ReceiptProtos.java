// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.PolicyNodeReceipt;
import io.kubeverdict.proto.v1.PolicyReceipt;

/** {@link Receipt}s as inspection messages. */
public final class ReceiptProtos {
    private ReceiptProtos() {}

    public static PolicyReceipt toProto(Receipt r) {
        PolicyReceipt.Builder b = PolicyReceipt.newBuilder()
                .setKind(r.ref().kind())
                .setNamespace(r.ref().namespace())
                .setName(r.ref().name())
                .setGeneration(r.generation())
                .setResourceVersion(r.resourceVersion())
                .setCalculated(r.calculated())
                .setNodes(r.nodes())
                .setEnforcedNodes(r.enforcedNodes())
                .setEnforced(r.enforced());
        if (r.writtenUnixNanos() != 0) {
            b.setWritten(Timestamps.fromNanos(r.writtenUnixNanos()));
        }
        if (r.enforced() && r.enforcedSinceUnixNanos() != 0) {
            b.setEnforcedSince(Timestamps.fromNanos(r.enforcedSinceUnixNanos()));
        }
        if (r.latencyNanos() >= 0) {
            b.setLatency(Durations.fromNanos(r.latencyNanos()));
        }
        for (Receipt.NodeReceipt n : r.nodeReceipts()) {
            PolicyNodeReceipt.Builder nb = PolicyNodeReceipt.newBuilder()
                    .setNode(n.node())
                    .setEnforced(n.enforced())
                    .setRequiredVersion(n.requiredVersion())
                    .setAppliedVersion(n.appliedVersion());
            if (n.sinceUnixNanos() != 0) {
                nb.setSince(Timestamps.fromNanos(n.sinceUnixNanos()));
            }
            b.addNodeReceipts(nb);
        }
        return b.build();
    }
}
