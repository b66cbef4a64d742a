// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.NodeStatus;
import java.util.List;
import java.util.Map;

/**
 * observe's --pod and --node checked before following: a name the control plane does not know
 * would otherwise be a stream that stays silent for ever, which reads as "no traffic".
 */
final class ObserveTargets {
    private static final int NAMES_SHOWN = 10;

    private ObserveTargets() {}

    /** A pod's labels as the control plane has them (none for a pod it does not know as an endpoint). */
    static Map<String, String> labels(ControlPlaneInspectionBlockingStub stub, String pod) {
        try {
            return stub.describeEndpoint(
                            DescribeEndpointRequest.newBuilder().setPod(pod).build())
                    .getLabelsMap();
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return Map.of();
            }
            throw e;
        }
    }

    /** Why pod or node ("" for none) names nothing the control plane knows, or null when both are known. */
    static String unknown(ControlPlaneInspectionBlockingStub stub, String pod, String node) {
        if (!node.isEmpty()) {
            List<String> nodes = NodeListing.all(stub).getNodesList().stream()
                    .map(NodeStatus::getNode)
                    .toList();
            if (!nodes.contains(node)) {
                return "--node " + node + ": no such node (the control plane knows "
                        + (nodes.isEmpty()
                                ? "none"
                                : String.join(", ", nodes.subList(0, Math.min(NAMES_SHOWN, nodes.size())))
                                        + (nodes.size() > NAMES_SHOWN ? ", ..." : ""))
                        + ")";
            }
        }
        if (!pod.isEmpty()) {
            try {
                stub.describeEndpoint(
                        DescribeEndpointRequest.newBuilder().setPod(pod).build());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                    throw e;
                }
                return "--pod " + pod + ": no such pod with an address (namespace/name; " + "kube-verdict policies "
                        + pod + " says more)";
            }
        }
        return null;
    }
}
