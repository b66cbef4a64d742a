// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.TierVisit;
import io.kubeverdict.proto.v1.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * An explanation for people: the connection and the verdict (said once), then per direction who
 * decides it, whether and by which policies the pod is isolated, and one line per tier visited.
 *
 * <pre>
 * z/a (10.244.3.10) -> x/a (10.244.1.10) 80/TCP: DENY
 *   egress   z/a on node n3: not isolated
 *   ingress  x/a on node n1: isolated by x/default-deny, x/allow-a-from-y-web
 *     tier default: no rule matched, the tier's default denies
 * </pre>
 */
public final class ExplanationText {
    private ExplanationText() {}

    /** @param nodeOfIp the node an endpoint address lives on, for "on node N" */
    public static String render(Explanation e, Function<String, Optional<String>> nodeOfIp) {
        StringBuilder sb = new StringBuilder();
        sb.append(side(e.hasSource() ? e.getSource() : null, e.getTuple().getSrcIp()))
                .append(" -> ")
                .append(side(
                        e.hasDestination() ? e.getDestination() : null,
                        e.getTuple().getDstIp()))
                .append(' ')
                .append(PortProtocol.format(
                        e.getTuple().getDstPort(), e.getTuple().getProtocol()))
                .append(": ")
                .append(VerdictWords.of(e.getVerdict()))
                .append('\n');
        direction(
                sb,
                "egress ",
                e.getEgress(),
                e.hasSource() ? e.getSource() : null,
                e.getTuple().getSrcIp(),
                nodeOfIp);
        direction(
                sb,
                "ingress",
                e.getIngress(),
                e.hasDestination() ? e.getDestination() : null,
                e.getTuple().getDstIp(),
                nodeOfIp);
        return sb.toString();
    }

    private static String side(EndpointId id, String ip) {
        return id == null ? ip : name(id) + " (" + ip + ")";
    }

    private static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    private static void direction(
            StringBuilder sb,
            String label,
            DirectionExplanation d,
            EndpointId id,
            String ip,
            Function<String, Optional<String>> nodeOfIp) {
        sb.append("  ").append(label).append("  ");
        if (!d.getEvaluated()) {
            sb.append(id == null ? ip : name(id))
                    .append(": ")
                    .append(d.getReason())
                    .append('\n');
            return;
        }
        sb.append(id == null ? ip : name(id));
        nodeOfIp.apply(ip).ifPresent(n -> sb.append(" on node ").append(n));
        sb.append(": ");
        if (!d.getIsolated()) {
            sb.append("not isolated (no policy selects it for ")
                    .append(label.strip())
                    .append(")\n");
            return;
        }
        List<String> isolating = new ArrayList<>();
        d.getTiersList().forEach(t -> isolating.addAll(t.getPoliciesList()));
        sb.append("isolated by ")
                .append(isolating.isEmpty() ? "a policy" : String.join(", ", isolating))
                .append('\n');
        for (TierVisit t : d.getTiersList()) {
            sb.append("    tier ")
                    .append(t.getTier())
                    .append(": ")
                    .append(tierOutcome(t, d))
                    .append('\n');
        }
        if (d.getDecidingTier().isEmpty()) {
            sb.append("    every tier passed: allowed\n");
        }
    }

    private static String tierOutcome(TierVisit t, DirectionExplanation d) {
        if (!t.getDecided()) {
            // The verdict function's own record of the Pass names the rule; the visit only the tier.
            return d.getPassedList().stream()
                    .filter(s -> s.getTier().equals(t.getTier()))
                    .findFirst()
                    .filter(s -> s.hasPolicy() && !s.getPolicy().getName().isEmpty())
                    .map(s -> "passed by " + s.getPolicy().getName() + " " + s.getRuleId() + " to the next tier")
                    .orElse("passed to the next tier");
        }
        String verb = VerdictWords.of(d.getVerdict());
        if (d.hasPolicy() && !d.getPolicy().getName().isEmpty()) {
            return verb + " by " + d.getPolicy().getName() + " " + d.getRuleId();
        }
        return "no rule matched, the tier's default " + (d.getVerdict() == Verdict.VERDICT_ALLOW ? "allows" : "denies");
    }
}
