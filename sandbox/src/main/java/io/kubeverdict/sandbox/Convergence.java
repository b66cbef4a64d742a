// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeStatus;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Waits, by polling the inspection services, until the system enforces one manifest revision:
 * the control plane reports the revision of the copy last written (it publishes a revision only
 * after the snapshots computed from that load), every node's stream has sent that revision in
 * full and the node applied all that was sent, and every agent is in sync. A positive signal: a
 * change that moves no node's sequence converges as soon as its revision is reported.
 */
final class Convergence {
    private final Inspection inspection;
    private final SandboxProcesses processes;
    private final List<String> nodes;

    Convergence(Inspection inspection, SandboxProcesses processes, List<String> nodes) {
        this.inspection = inspection;
        this.processes = processes;
        this.nodes = List.copyOf(nodes);
    }

    /** Returns once converged on revision; throws with the reason and the logs' tails after timeout or when a process exits. */
    void await(String revision, Duration timeout) throws InterruptedException {
        await(revision, timeout, nodes);
    }

    /**
     * Like {@link #await(String, Duration)} for some nodes only (the control plane must have
     * published revision, and these nodes' agents must enforce it), e.g. while another node's
     * agent is down or cut off.
     */
    void await(String revision, Duration timeout, Collection<String> which) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String why;
        while (true) {
            processes.checkAlive(which);
            try {
                why = notConverged(revision, which);
                if (why == null) {
                    return;
                }
            } catch (StatusRuntimeException e) {
                why = e.getStatus().getCode() + " " + e.getStatus().getDescription();
                inspection.resetConnectBackoff(); // a restarted process is dialled at the next poll
            }
            if (System.nanoTime() >= deadline) {
                throw new SandboxException(
                        "agents did not converge within " + timeout.toSeconds() + "s: " + why + processes.logTails(20));
            }
            Thread.sleep(100);
        }
    }

    /** Why the nodes have not converged on revision yet; null when they have. */
    private String notConverged(String revision, Collection<String> which) {
        ListNodesResponse list = inspection.listNodes();
        if (!list.getSourceRevision().equals(revision)) {
            return "the control plane has not published revision " + revision + " of its manifest copy (it reports \""
                    + list.getSourceRevision() + "\"; a load it rejected stays unreported, see its log)";
        }
        Map<String, NodeStatus> byNode = new LinkedHashMap<>();
        list.getNodesList().forEach(n -> byNode.put(n.getNode(), n));
        for (String node : which) {
            NodeStatus n = byNode.get(node);
            if (n == null || !n.getConnected()) {
                return "control plane has no stream to " + node;
            }
            if (!n.getSourceRevision().equals(revision)) {
                return "the stream to " + node + " has not sent revision " + revision + " yet";
            }
            if (n.getAppliedSequence() < n.getSentSequence()) {
                return node + " applied " + n.getAppliedSequence() + " of " + n.getSentSequence();
            }
            if (!inspection.agent(node).getInSync()) {
                return "agent " + node + " not in sync";
            }
        }
        return null;
    }
}
