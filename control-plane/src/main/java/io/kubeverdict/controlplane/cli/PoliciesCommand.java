package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.SetMembership;
import io.kubeverdict.proto.v1.SetUse;
import io.kubeverdict.proto.v1.TierInfo;
import java.io.PrintWriter;
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
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "policies", description = {
        "Which policies of every tier select a pod, per direction (what isolates it), and which IP sets it is in: "
                + "where it is a peer of other pods' rules, by the sets' definitions and the rules that use them.",
        "Exit status: 0, 2 for an unknown pod or bad options, 3 when the control plane cannot be asked."})
final class PoliciesCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "NAMESPACE/POD", description = "An endpoint pod.")
    String pod;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (pod.indexOf('/') <= 0 || pod.indexOf('/') == pod.length() - 1) {
            err.println("want NAMESPACE/POD, got '" + pod + "'");
            err.flush();
            return ExitCodes.USAGE;
        }
        ManagedChannel channel;
        try {
            channel = client.open();
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        }
        EndpointDescription d;
        try {
            d = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .describeEndpoint(DescribeEndpointRequest.newBuilder().setPod(pod).build());
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
        out.print(output.format() == OutputFormat.table ? text(d) : Rendering.machine(output.format(), d));
        out.flush();
        return ExitCodes.OK;
    }

    static String text(EndpointDescription d) {
        StringBuilder sb = new StringBuilder();
        sb.append(d.getId().getNamespace()).append('/').append(d.getId().getPod()).append(" on node ").append(d.getNode())
                .append(" (").append(String.join(", ", d.getIpsList())).append(")");
        if (d.getLabelsCount() > 0) {
            sb.append(", labels ").append(new TreeMap<>(d.getLabelsMap()).entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(",")));
        }
        sb.append("\n\n");
        TextTable tiers = new TextTable("TIER", "DIRECTION", "SELECTED BY (in evaluation order)");
        for (String direction : List.of("ingress", "egress")) {
            boolean isolated = false;
            for (TierInfo t : d.getTiersList()) {
                List<String> policies = direction.equals("ingress") ? t.getIngressPoliciesList() : t.getEgressPoliciesList();
                if (!policies.isEmpty()) {
                    isolated = true;
                    tiers.row(t.getName(), direction, String.join(", ", policies)
                            + " (no match: " + t.getDefaultAction().name().toLowerCase(Locale.ROOT) + ")");
                }
            }
            if (!isolated) {
                tiers.row("", direction, "nothing: not isolated, every connection allowed");
            }
        }
        sb.append(tiers.render()).append('\n');
        if (d.getMemberOfCount() == 0) {
            sb.append("in no IP set: no policy's rule names this pod as a peer\n");
            return sb.toString();
        }
        TextTable sets = new TextTable("IN SET", "MEMBERS", "USED BY");
        for (SetMembership m : d.getMemberOfList()) {
            sets.row(m.getDescription().isEmpty() ? m.getIpSetId() : m.getDescription(),
                    String.join(", ", m.getMembersList()), uses(m.getUsedByList()));
        }
        sb.append(sets.render());
        return sb.toString();
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
        return byPolicy.entrySet().stream().map(e -> e.getKey() + " " + String.join(" ", e.getValue()))
                .collect(Collectors.joining(", "));
    }

    /** A NetworkPolicy by its namespace/name; policies of other tiers with the tier in front. */
    static String policyName(PolicyId id) {
        return id.getTier().isEmpty() || id.getTier().equals("default") ? id.getName() : id.getTier() + "/" + id.getName();
    }
}
