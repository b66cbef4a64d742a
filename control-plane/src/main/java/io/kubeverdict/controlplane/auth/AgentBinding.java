// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.fabric8.kubernetes.api.model.Pod;
import io.grpc.Status;
import java.util.function.BiFunction;

/**
 * Binds a reviewed token to a caller: only the agent's ServiceAccount is an agent, and its node is
 * the token's node claim ({@link Review#NODE_NAME}, Kubernetes 1.30+) or else the node of the pod
 * the token is bound to, found in the Pod informer by name and checked by uid (a pod deleted and
 * created again under the same name, e.g. on another node, is another pod). The pod is looked up
 * on every call, so a cached review never outlives its pod's placement.
 */
public final class AgentBinding {
    private final String agentNamespace;
    private final String agentUsername;
    private final BiFunction<String, String, Pod> pods;
    private final InspectionAccess inspection;

    /**
     * @param pods (namespace, name) -> the pod as the informer has it, or null
     * @param inspection who else may inspect
     */
    public AgentBinding(
            String agentNamespace,
            String agentServiceAccount,
            BiFunction<String, String, Pod> pods,
            InspectionAccess inspection) {
        this.agentNamespace = agentNamespace;
        this.agentUsername = "system:serviceaccount:" + agentNamespace + ":" + agentServiceAccount;
        this.pods = pods;
        this.inspection = inspection;
    }

    public String agentUsername() {
        return agentUsername;
    }

    public Caller bind(Review review) {
        if (!review.ok()) {
            return Caller.refused(
                    "",
                    (review.apiFailure() ? Status.UNAVAILABLE : Status.UNAUTHENTICATED)
                            .withDescription(review.error()));
        }
        String user = review.username();
        if (!agentUsername.equals(user)) {
            return Caller.user(user, inspection.check(review));
        }
        String node = review.extraValue(Review.NODE_NAME);
        if (node != null && !node.isEmpty()) {
            return Caller.agent(user, node);
        }
        String podName = review.extraValue(Review.POD_NAME);
        String podUid = review.extraValue(Review.POD_UID);
        if (podName == null || podUid == null) {
            return Caller.refused(
                    user,
                    Status.PERMISSION_DENIED.withDescription(
                            "the token of " + user + " is bound to no pod and names no node: mount a projected "
                                    + "ServiceAccount token (audience kube-verdict), not a Secret token"));
        }
        Pod pod = pods.apply(agentNamespace, podName);
        if (pod == null) {
            return Caller.refused(
                    user,
                    Status.PERMISSION_DENIED.withDescription(
                            "the token's pod " + agentNamespace + "/" + podName + " is not in the cluster (yet)"));
        }
        if (!podUid.equals(pod.getMetadata().getUid())) {
            return Caller.refused(
                    user,
                    Status.PERMISSION_DENIED.withDescription("the token's pod " + agentNamespace + "/" + podName
                            + " (uid " + podUid + ") is gone; a pod of that name now has uid "
                            + pod.getMetadata().getUid()));
        }
        String podNode = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (podNode == null || podNode.isEmpty()) {
            return Caller.refused(
                    user,
                    Status.PERMISSION_DENIED.withDescription(
                            "the token's pod " + agentNamespace + "/" + podName + " is not placed on a node"));
        }
        return Caller.agent(user, podNode);
    }
}
