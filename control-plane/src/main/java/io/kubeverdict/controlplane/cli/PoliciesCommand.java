// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.flows.DecidingRule;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.LearnedAddress;
import io.kubeverdict.proto.v1.LearnedDomains;
import io.kubeverdict.proto.v1.ListEndpointsRequest;
import io.kubeverdict.proto.v1.ListEndpointsResponse;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.SetMembership;
import io.kubeverdict.proto.v1.SetUse;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.runtime.grpc.ClientChannels;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "policies",
        description = {
            "Which policies of every tier select a pod, per direction (what isolates it), and which IP sets it is in: "
                    + "where it is a peer of other pods' rules, by the sets' definitions and the rules that use them.",
            "With --agent, also what the pod learned from DNS for its egress rules to domain names (asked of the agent "
                    + "of the pod's node).",
            "Exit status: 0, 2 for an unknown pod or bad options, 3 when the control plane (or the agent) cannot be asked."
        })
final class PoliciesCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "NAMESPACE/POD", description = "An endpoint pod (POD with -n NAMESPACE).")
    String pod;

    @Mixin
    NamespaceOption namespace = new NamespaceOption();

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Option(
            names = "--agent",
            paramLabel = "HOST:PORT",
            converter = HostPort.Target.class,
            description = "The inspection port of the agent on the pod's node (plaintext; e.g. after kubectl -n "
                    + "kube-verdict port-forward POD-OF-THE-AGENT 9102): adds the addresses the pod learned from DNS, "
                    + "with the name asked and the time left.")
    HostPort agent;

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        pod = namespace.qualify(pod);
        if (pod.indexOf('/') <= 0 || pod.indexOf('/') == pod.length() - 1) {
            err.println("want NAMESPACE/POD, got '" + pod + "'");
            err.flush();
            return ExitCodes.USAGE;
        }
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        EndpointDescription d;
        try {
            d = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .describeEndpoint(
                            DescribeEndpointRequest.newBuilder().setPod(pod).build());
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
        List<LearnedDomains> learned = List.of();
        if (agent != null) {
            try {
                learned = learnedBy(d);
            } catch (StatusRuntimeException | IOException e) {
                err.println("cannot ask the agent at " + agent + ": "
                        + (e instanceof StatusRuntimeException s ? s.getStatus() : e.getMessage()));
                err.flush();
                return ExitCodes.UNAVAILABLE;
            }
        }
        out.print(
                output.format().isTable()
                        ? text(d, agent == null ? null : learned)
                        : Rendering.machine(
                                output.format(),
                                d.toBuilder().addAllLearned(learned).build()));
        out.flush();
        return ExitCodes.OK;
    }

    /** What the agent says the pod learned, one entry per domain-name peer. */
    private List<LearnedDomains> learnedBy(EndpointDescription d) throws IOException {
        ManagedChannel channel =
                ClientChannels.open(agent.toString(), null); // the agent serves inspection in plaintext
        try {
            ListEndpointsResponse all = AgentInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .listEndpoints(ListEndpointsRequest.getDefaultInstance());
            return all.getLearnedList().stream()
                    .filter(l -> l.getEndpoint().equals(d.getId()))
                    .toList();
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }

    static String text(EndpointDescription d) {
        return text(d, null);
    }

    /** @param learned what the agent said the pod learned, or null when it was not asked */
    static String text(EndpointDescription d, List<LearnedDomains> learned) {
        StringBuilder sb = new StringBuilder();
        sb.append(d.getId().getNamespace())
                .append('/')
                .append(d.getId().getPod())
                .append(" on node ")
                .append(d.getNode())
                .append(" (")
                .append(String.join(", ", d.getIpsList()))
                .append(")");
        if (d.getLabelsCount() > 0) {
            sb.append(", labels ")
                    .append(new TreeMap<>(d.getLabelsMap())
                            .entrySet().stream()
                                    .map(e -> e.getKey() + "=" + e.getValue())
                                    .collect(Collectors.joining(",")));
        }
        sb.append("\n\n");
        TextTable tiers = new TextTable("TIER", "DIRECTION", "SELECTED BY (in evaluation order)");
        for (String direction : List.of("ingress", "egress")) {
            boolean isolated = false;
            for (TierInfo t : d.getTiersList()) {
                List<String> policies =
                        direction.equals("ingress") ? t.getIngressPoliciesList() : t.getEgressPoliciesList();
                if (!policies.isEmpty()) {
                    isolated = true;
                    tiers.row(
                            t.getName(),
                            direction,
                            String.join(", ", policies) + " (no match: "
                                    + t.getDefaultAction().name().toLowerCase(Locale.ROOT) + ")");
                }
            }
            if (!isolated) {
                tiers.row("", direction, "nothing: not isolated, every connection allowed");
            }
        }
        sb.append(tiers.render()).append('\n');
        if (d.getDomainWatchesCount() > 0) {
            sb.append(learnedText(d.getDomainWatchesList(), learned)).append('\n');
        }
        if (d.getMemberOfCount() == 0) {
            sb.append("in no IP set: no policy's rule names this pod as a peer\n");
            return sb.toString();
        }
        TextTable sets = new TextTable("IN SET", "MEMBERS", "USED BY");
        for (SetMembership m : d.getMemberOfList()) {
            sets.row(
                    m.getDescription().isEmpty() ? m.getIpSetId() : m.getDescription(),
                    String.join(", ", m.getMembersList()),
                    uses(m.getUsedByList()));
        }
        sb.append(sets.render());
        return sb.toString();
    }

    /** The pod's domain-name peers and, when the agent was asked, what it learned for each. */
    private static String learnedText(List<DomainNames> watches, List<LearnedDomains> learned) {
        if (learned == null) {
            return "egress to domain names "
                    + watches.stream()
                            .map(w -> String.join(", ", w.getPatternsList()))
                            .collect(Collectors.joining("; "))
                    + ": the addresses are learned at run time from the DNS answers"
                    + " the pod receives (--agent shows them)\n";
        }
        TextTable table = new TextTable("DOMAIN NAMES", "LEARNED NAME", "ADDRESS", "EXPIRES IN");
        for (DomainNames w : watches) {
            String patterns = String.join(", ", w.getPatternsList());
            List<LearnedAddress> addresses = learned.stream()
                    .filter(l -> l.getDomainNames().getLearnedSetId().equals(w.getLearnedSetId()))
                    .flatMap(l -> l.getAddressesList().stream())
                    .toList();
            if (addresses.isEmpty()) {
                table.row(patterns, "", "nothing learned yet", "");
            }
            for (LearnedAddress a : addresses) {
                table.row(
                        patterns,
                        a.getName(),
                        a.getAddress(),
                        Durations.compact(Duration.ofSeconds(
                                a.getExpiresIn().getSeconds(), a.getExpiresIn().getNanos())));
            }
        }
        return table.render();
    }

    private static String uses(List<SetUse> uses) {
        if (uses.isEmpty()) {
            return "no rule of an enforced policy";
        }
        Map<String, List<String>> byPolicy = new TreeMap<>();
        for (SetUse u : uses) {
            byPolicy.computeIfAbsent(policyName(u.getPolicy()), k -> new ArrayList<>())
                    .add(u.getRuleId() + (u.getNamedPort() ? " (named port)" : ""));
        }
        return byPolicy.entrySet().stream()
                .map(e -> e.getKey() + " " + String.join(" ", e.getValue()))
                .collect(Collectors.joining(", "));
    }

    /** A NetworkPolicy by its namespace/name; policies of other tiers with the tier in front. */
    static String policyName(PolicyId id) {
        return DecidingRule.policyName(id);
    }
}
