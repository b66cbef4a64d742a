// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.receipts.PolicyRef;
import io.kubeverdict.controlplane.receipts.ReceiptProtos;
import io.kubeverdict.controlplane.receipts.ReplicatedReceipts;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.ListLocalReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.LocalReceipts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * ListPolicyReceipts (operators, `wait`) and ListLocalReceipts (the other replicas), for callers
 * the inspection service has found cluster-wide.
 */
final class ReceiptCalls {
    /** Node entries per policy in ListPolicyReceipts: every policy, named ones, and at most. */
    static final int RECEIPT_NODES_ALL = 3;

    static final int RECEIPT_NODES_NAMED = 1000;
    static final int RECEIPT_NODES_MAX = 10_000;
    /** Named policies per call. */
    static final int MAX_NAMED_POLICIES = 1000;
    /** Lagging nodes named per policy to a peer. */
    static final int MAX_LAGGING = 1000;

    private final ReplicatedReceipts receipts;
    private final SnapshotHub hub;

    ReceiptCalls(ReplicatedReceipts receipts, SnapshotHub hub) {
        this.receipts = receipts;
        this.hub = hub;
    }

    void list(ListPolicyReceiptsRequest request, StreamObserver<ListPolicyReceiptsResponse> out) {
        Map<PolicyRef, String> named = named(request.getPoliciesList(), out);
        if (named == null) {
            return;
        }
        int maxNodes = request.getMaxNodes() > 0
                ? Math.min(request.getMaxNodes(), RECEIPT_NODES_MAX)
                : named.isEmpty() ? RECEIPT_NODES_ALL : RECEIPT_NODES_NAMED;
        ReplicatedReceipts.Look look =
                named.isEmpty() ? receipts.all(maxNodes) : receipts.named(named.keySet(), maxNodes);
        ListPolicyReceiptsResponse.Builder b = ListPolicyReceiptsResponse.newBuilder();
        look.receipts().forEach(r -> b.addReceipts(ReceiptProtos.toProto(r)));
        look.missing().forEach(ref -> b.addUnknown(named.get(ref)));
        out.onNext(b.build());
        out.onCompleted();
    }

    void local(ListLocalReceiptsRequest request, StreamObserver<LocalReceipts> out) {
        Map<PolicyRef, String> named = named(request.getPoliciesList(), out);
        if (named == null) {
            return;
        }
        int maxLagging = Math.min(request.getMaxLagging(), MAX_LAGGING);
        out.onNext(receipts.localStatements(new ArrayList<>(named.keySet()), maxLagging));
        out.onCompleted();
    }

    /** The named policies in order (each once, as first named), or null after failing the call. */
    private Map<PolicyRef, String> named(List<String> texts, StreamObserver<?> out) {
        if (!hub.isReady()) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("first calculation not done yet")
                    .asRuntimeException());
            return null;
        }
        if (texts.size() > MAX_NAMED_POLICIES) {
            out.onError(Status.INVALID_ARGUMENT
                    .withDescription("at most " + MAX_NAMED_POLICIES + " policies per call")
                    .asRuntimeException());
            return null;
        }
        TreeMap<PolicyRef, String> named = new TreeMap<>();
        for (String text : texts) {
            try {
                named.putIfAbsent(PolicyRef.parse(text), text);
            } catch (IllegalArgumentException e) {
                out.onError(
                        Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
                return null;
            }
        }
        return named;
    }
}
