// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.FlowReplay;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.controlplane.tools.PolicyRecommender;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.Verdict;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "recommend",
        description = {
            "Propose least-privilege NetworkPolicies for a namespace from the allowed flows of the flow history: one "
                    + "per workload (selected by its stable labels), isolating ingress and egress, one rule per peer "
                    + "with exactly the ports seen (by name where the pod names them), ipBlocks only for addresses "
                    + "outside the cluster. Meant to replace the namespace's NetworkPolicies; staged "
                    + "(kube-verdict.io/staged: \"true\") unless --enforced.",
            "Before printing, the flow history is replayed through --manifests DIR (the current state: pods with "
                    + "their named ports) with the namespace's NetworkPolicies replaced by the recommended ones: no "
                    + "allowed flow may flip.",
            "Exit status: 0 printed, 1 the check failed (the flows on stderr, nothing printed), 2 bad options or "
                    + "input, 3 when the control plane cannot be asked."
        })
final class RecommendCommand implements Callable<Integer> {
    @Option(names = "--namespace", required = true, paramLabel = "NS", description = "The namespace to recommend for.")
    String namespace;

    @Option(names = "--enforced", description = "Without the staged annotation.")
    boolean enforced;

    @Mixin
    OfflineInput input;

    @Mixin
    FlowInput flows = new FlowInput();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (!input.given()) {
                throw new OfflineInput.FatalInput(
                        "recommend needs --manifests DIR: the current state (pods, namespaces, policies)");
            }
            OfflineInput.Loaded current = input.load(err);
            ListFlowsResponse history = flows.load(namespace);
            FlowReplay resolve = new FlowReplay(current.cluster());
            var shown = recommend(current, resolve, history.getFlowsList(), !enforced);
            var checked = recommend(current, resolve, history.getFlowsList(), false);
            List<FlowReplay.Flip> broken = check(current.objects(), parse(checked), history.getFlowsList());
            shown.notes().forEach(n -> err.println("note: " + n));
            if (!broken.isEmpty()) {
                err.println(
                        "the recommended policies would deny " + broken.size() + " allowed flows; nothing printed:");
                for (FlowReplay.Flip f : broken) {
                    err.println("  " + FlowsCommand.side(f.flow().getSource()) + " -> "
                            + FlowsCommand.side(f.flow().getDestination()) + " "
                            + PortProtocol.format(f.flow().getPort(), f.flow().getProtocol()) + ": "
                            + f.afterDecidedBy());
                }
                err.flush();
                return ExitCodes.NEGATIVE;
            }
            out.print(yaml(shown.policies()));
            out.flush();
            err.flush();
            return ExitCodes.OK;
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        } catch (StatusRuntimeException e) {
            return flows.client.failed(err, e);
        }
    }

    private PolicyRecommender.Recommendation recommend(
            OfflineInput.Loaded current, FlowReplay resolve, List<FlowRecord> history, boolean staged) {
        return PolicyRecommender.recommend(
                namespace, history, resolve::pod, current.cluster().endpointModels(), staged);
    }

    static String yaml(List<Map<String, Object>> policies) {
        return policies.stream().map(p -> "---\n" + Rendering.yaml(p)).collect(Collectors.joining());
    }

    /** The manifests as the project's loader reads them: what is checked is what is printed. */
    private static List<NetworkPolicy> parse(PolicyRecommender.Recommendation r) throws OfflineInput.FatalInput {
        try {
            LoadedManifests m = new ManifestLoader().loadText("recommended.yaml", yaml(r.policies()));
            if (!m.problems().isEmpty()) {
                throw new OfflineInput.FatalInput("the recommended policies do not load: " + m.problems());
            }
            return m.policies();
        } catch (ManifestLoadException e) {
            throw new OfflineInput.FatalInput("the recommended policies do not load: " + e.errors());
        }
    }

    /** The allowed flows of the namespace that flip with its NetworkPolicies replaced by these. */
    private List<FlowReplay.Flip> check(
            ClusterObjects state, List<NetworkPolicy> recommended, List<FlowRecord> history) {
        List<NetworkPolicy> policies = new ArrayList<>();
        state.policies().stream()
                .filter(p -> !namespace.equals(p.getMetadata().getNamespace()))
                .forEach(policies::add);
        policies.addAll(recommended);
        OfflineCluster replaced = new OfflineCluster(
                new ClusterObjects(state.namespaces(), state.pods(), policies, state.adminPolicies(), state.nodes()));
        List<FlowRecord> allowed = history.stream()
                .filter(f -> f.getVerdict() == Verdict.VERDICT_ALLOW)
                .toList();
        return new FlowReplay(replaced).replay(allowed).flips();
    }
}
