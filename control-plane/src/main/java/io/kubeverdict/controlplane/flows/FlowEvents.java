// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A relayed verdict as a flow observation: each side as its workload, the deciding direction's
 * policy and rule, and the staged policies' would-be verdict where it differs.
 */
public final class FlowEvents {
    private FlowEvents() {}

    /**
     * @param labelsOf a pod's labels by "namespace/name" (empty when the control plane no longer
     *     holds the pod: the pod is then its own workload)
     * @return empty for an event that is no first-packet verdict (a cut of an established
     *     connection is a consequence of a change, not traffic the workloads made)
     */
    public static Optional<FlowHistory.Observation> observation(
            VerdictEvent event, Function<String, Map<String, String>> labelsOf) {
        Explanation x = event.getExplanation();
        if (x.hasCut()) {
            return Optional.empty();
        }
        DirectionExplanation d = DecidingRule.of(x);
        boolean named = d.hasPolicy() && !d.getPolicy().getName().isEmpty();
        FlowKey key = new FlowKey(
                side(x.hasSource() ? x.getSource() : null, x.getTuple().getSrcIp(), labelsOf),
                side(
                        x.hasDestination() ? x.getDestination() : null,
                        x.getTuple().getDstIp(),
                        labelsOf),
                x.getTuple().getProtocol(),
                x.getTuple().getDstPort(),
                x.getVerdict(),
                DecidingRule.direction(x),
                named ? d.getPolicy().getTier() : "",
                named ? d.getPolicy().getName() : "",
                named ? d.getRuleId() : "",
                DecidingRule.text(x),
                x.hasStaged() ? x.getStaged() : StagedVerdict.getDefaultInstance());
        long millis = event.getTime().getSeconds() * 1000 + event.getTime().getNanos() / 1_000_000;
        return Optional.of(new FlowHistory.Observation(
                key,
                millis,
                x.hasSource() ? name(x.getSource()) : "",
                x.getTuple().getSrcIp(),
                x.hasDestination() ? name(x.getDestination()) : "",
                x.getTuple().getDstIp()));
    }

    private static FlowKey.Side side(EndpointId id, String ip, Function<String, Map<String, String>> labelsOf) {
        if (id == null || id.getNamespace().isEmpty()) {
            return FlowKey.Side.outside(ip);
        }
        Map<String, String> labels = labelsOf.apply(name(id));
        return new FlowKey.Side(
                id.getNamespace(), Workloads.workloadName(id.getPod(), labels), Workloads.stableLabels(labels), "");
    }

    static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }
}
