// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * One record per connection, with both directions decided. Each node's agent decides the
 * directions of its own pods: a connection between pods of two nodes that police it (a policy
 * lists the pod, so its node queues the connection) is reported twice, each time with the other
 * side not evaluated. The source node's allowed report is left out (the destination node reports
 * the same connection); a denied one is kept (the packet never reached the other node). The side
 * a report did not evaluate is decided with that side's node snapshot, by the same verdict
 * function, so the record says what the whole path decided.
 */
public final class PartialVerdicts {
    /** Where a pod runs, whether its node polices its connections (a tier lists it), and its labels. */
    public record Placed(String node, boolean policed, Map<String, String> labels) {
        /** A pod as its node's published snapshot lists it: policed when some tier selects it. */
        public static Placed of(String node, WorkloadEndpoint endpoint) {
            return new Placed(node, endpoint.getTiersCount() > 0, endpoint.getLabelsMap());
        }
    }

    /** One direction of a tuple as a node's published snapshot decides it. */
    public interface DirectionDecider {
        DirectionExplanation decide(String node, Tuple tuple, boolean egress);
    }

    private PartialVerdicts() {}

    /** The event completed; empty when another node's report of the same connection is the one to keep. */
    public static Optional<VerdictEvent> complete(
            VerdictEvent e, Function<String, Optional<Placed>> placeOf, DirectionDecider decider) {
        Explanation x = e.getExplanation();
        Optional<Placed> src = x.hasSource() ? placeOf.apply(name(x.getSource())) : Optional.empty();
        Optional<Placed> dst = x.hasDestination() ? placeOf.apply(name(x.getDestination())) : Optional.empty();
        String reporter = e.getNode();
        boolean bothPoliced = src.filter(Placed::policed).isPresent()
                && dst.filter(Placed::policed).isPresent()
                && !src.get().node().equals(dst.get().node());
        if (bothPoliced && src.get().node().equals(reporter) && x.getVerdict() == Verdict.VERDICT_ALLOW) {
            return Optional.empty();
        }
        DirectionExplanation egress = x.getEgress();
        DirectionExplanation ingress = x.getIngress();
        if (!egress.getEvaluated() && farAndPoliced(src, reporter)) {
            egress = decider.decide(src.get().node(), x.getTuple(), true);
        }
        if (!ingress.getEvaluated() && farAndPoliced(dst, reporter)) {
            ingress = decider.decide(dst.get().node(), x.getTuple(), false);
        }
        if (egress == x.getEgress() && ingress == x.getIngress()) {
            return Optional.of(e);
        }
        boolean denied = denies(egress) || denies(ingress);
        return Optional.of(e.toBuilder()
                .setExplanation(x.toBuilder()
                        .setEgress(egress)
                        .setIngress(ingress)
                        .setVerdict(denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW))
                .build());
    }

    private static boolean farAndPoliced(Optional<Placed> side, String reporter) {
        return side.filter(p -> p.policed() && !p.node().equals(reporter)).isPresent();
    }

    private static boolean denies(DirectionExplanation d) {
        return d.getEvaluated() && d.getVerdict() != Verdict.VERDICT_ALLOW;
    }

    private static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }
}
