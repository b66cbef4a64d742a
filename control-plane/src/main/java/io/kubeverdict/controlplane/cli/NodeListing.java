// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;

/** Every node the control plane lists, all pages of ListNodes joined into one response. */
public final class NodeListing {
    private NodeListing() {}

    /** The nodes of every page in order; the source revision and problem of the last page (the newest answer). */
    public static ListNodesResponse all(ControlPlaneInspectionBlockingStub stub) {
        ListNodesResponse.Builder all = ListNodesResponse.newBuilder();
        String token = "";
        do {
            ListNodesResponse page = stub.listNodes(
                    ListNodesRequest.newBuilder().setPageToken(token).build());
            all.addAllNodes(page.getNodesList())
                    .setSourceRevision(page.getSourceRevision())
                    .setSourceProblem(page.getSourceProblem());
            token = page.getNextPageToken();
        } while (!token.isEmpty());
        return all.build();
    }
}
