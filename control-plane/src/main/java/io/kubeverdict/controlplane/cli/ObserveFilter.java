// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * observe's filters of one connection's side or what decided it (hubble's --from-pod, --to-pod,
 * --port, --from-port, --protocol, --policy, --label), applied here to each event the control
 * plane sends. --from-port needs the source port, which only agents that send it give.
 * Empty strings and negative numbers filter nothing.
 */
record ObserveFilter(
        String fromPod,
        String toPod,
        int port,
        int fromPort,
        int protocol,
        String policy,
        Map<String, String> labels,
        Function<String, Map<String, String>> labelsOfPod) {

    ObserveFilter {
        Map<String, Map<String, String>> cache = new HashMap<>();
        Function<String, Map<String, String>> lookup = labelsOfPod;
        labelsOfPod = pod -> cache.computeIfAbsent(pod, lookup); // one question per pod and run
    }

    boolean matches(Explanation x) {
        String src = x.hasSource() ? name(x.getSource()) : "";
        String dst = x.hasDestination() ? name(x.getDestination()) : "";
        if (!fromPod.isEmpty() && !fromPod.equals(src)) {
            return false;
        }
        if (!toPod.isEmpty() && !toPod.equals(dst)) {
            return false;
        }
        if (port >= 0 && x.getTuple().getDstPort() != port) {
            return false;
        }
        if (fromPort >= 0 && x.getTuple().getSrcPort() != fromPort) {
            return false;
        }
        if (protocol >= 0 && x.getTuple().getProtocol() != protocol) {
            return false;
        }
        if (!policy.isEmpty() && !decidedBy(x.getEgress()) && !decidedBy(x.getIngress())) {
            return false;
        }
        return labels.isEmpty() || hasLabels(src) || hasLabels(dst);
    }

    private boolean decidedBy(DirectionExplanation d) {
        return d.getEvaluated()
                && d.hasPolicy()
                && (policy.equals(d.getPolicy().getName()) || policy.equals(PoliciesCommand.policyName(d.getPolicy())));
    }

    private boolean hasLabels(String pod) {
        return !pod.isEmpty() && labelsOfPod.apply(pod).entrySet().containsAll(labels.entrySet());
    }

    static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }
}
