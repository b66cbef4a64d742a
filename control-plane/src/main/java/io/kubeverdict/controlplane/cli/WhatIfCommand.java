// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.tools.FlowReplay;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.Verdict;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(
        name = "whatif",
        description = {
            "Replay the flow history through a proposed state of the cluster (--manifests DIR: the namespaces, pods "
                    + "and policies as they would be, new, changed and deleted policies included) with the verdict "
                    + "function the agents use, and print the flows whose verdict would flip: counts, and what "
                    + "decided before (recorded) and after.",
            "Exit status: 0 nothing would flip, 1 something would (a CI gate), 2 bad options or a directory that "
                    + "does not load (file:line on stderr), 3 when the control plane cannot be asked."
        })
final class WhatIfCommand implements Callable<Integer> {
    @Mixin
    OfflineInput input;

    @Mixin
    FlowInput flows = new FlowInput();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        try {
            return run();
        } catch (OutOfMemoryError e) {
            return OutOfMemory.report(spec.commandLine().getErr(), input.describeForMemory());
        }
    }

    private int run() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (!input.given()) {
                throw new OfflineInput.FatalInput("whatif needs --manifests DIR: the proposed state of the cluster");
            }
            OfflineInput.Loaded proposed = input.load(err);
            ListFlowsResponse history = flows.load("");
            FlowReplay.Result result = new FlowReplay(proposed.cluster()).replay(history.getFlowsList());
            switch (output.format()) {
                case table -> {
                    if (!result.flips().isEmpty()) {
                        out.print(table(result));
                    }
                    out.println(summary(result, history));
                }
                case json, yaml -> out.print(Rendering.machine(output.format(), value(result)));
            }
            for (FlowRecord f : result.unresolved()) {
                err.println("note: not replayed (no pod of its workload in " + input.manifests + "): "
                        + FlowsCommand.side(f.getSource()) + " -> " + FlowsCommand.side(f.getDestination()) + " "
                        + PortProtocol.format(f.getPort(), f.getProtocol()));
            }
            out.flush();
            err.flush();
            return result.flips().isEmpty() ? ExitCodes.OK : ExitCodes.NEGATIVE;
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        } catch (StatusRuntimeException e) {
            return flows.client.failed(err, e);
        }
    }

    private static String table(FlowReplay.Result result) {
        TextTable t = new TextTable("FROM", "TO", "PORT", "COUNT", "BEFORE", "AFTER");
        for (FlowReplay.Flip f : result.flips()) {
            FlowRecord r = f.flow();
            t.row(
                    FlowsCommand.side(r.getSource()),
                    FlowsCommand.side(r.getDestination()),
                    PortProtocol.format(r.getPort(), r.getProtocol()),
                    r.getCount(),
                    verdict(f.before()) + " (" + r.getDecidedBy() + ")",
                    verdict(f.after().getVerdict()) + " (" + f.afterDecidedBy() + ")");
        }
        return t.render();
    }

    private static String summary(FlowReplay.Result result, ListFlowsResponse history) {
        return result.flips().size() + " of " + history.getFlowsCount() + " flows would flip ("
                + result.flippedCount() + " recorded verdicts)"
                + (result.unresolved().isEmpty()
                        ? ""
                        : "; " + result.unresolved().size() + " not replayed");
    }

    private static String verdict(Verdict v) {
        return VerdictWords.of(v);
    }

    private static Map<String, Object> value(FlowReplay.Result result) {
        List<Object> flips = new ArrayList<>();
        for (FlowReplay.Flip f : result.flips()) {
            Map<String, Object> after = new LinkedHashMap<>();
            after.put("verdict", f.after().getVerdict().name());
            after.put("decidedBy", f.afterDecidedBy());
            after.put("sourcePod", f.sourcePod());
            after.put("destinationPod", f.destinationPod());
            Map<String, Object> flip = new LinkedHashMap<>();
            flip.put("flow", Rendering.tree(f.flow()));
            flip.put("after", after);
            flips.add(flip);
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("replayed", result.replayed());
        v.put("flipped", result.flips().size());
        v.put("flippedVerdicts", result.flippedCount());
        v.put("flips", flips);
        v.put("notReplayed", result.unresolved().stream().map(Rendering::tree).toList());
        return v;
    }
}
