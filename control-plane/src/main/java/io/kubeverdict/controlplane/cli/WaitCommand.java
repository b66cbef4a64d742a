// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.receipts.PolicyRef;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListPolicyReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.PolicyReceipt;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "wait",
        description = {
            "Waits until every named policy is enforced on all the nodes it applies to, at the newest generation the "
                    + "control plane has seen (a policy written again while waiting is waited for at its new "
                    + "generation), like kubectl wait: for CI, after kubectl apply and before the workload.",
            "The control plane answers from what it has seen: run it after the write is accepted (kubectl apply "
                    + "returns then); a policy it has not seen yet is waited for.",
            "Exit status: 0 when every policy is enforced, 1 on timeout (naming the lagging nodes), 2 for bad "
                    + "options, 3 when the control plane cannot be asked."
        })
final class WaitCommand implements Callable<Integer> {
    /** How often the control plane is asked. */
    static final Duration INTERVAL = Duration.ofMillis(250);

    /** Longest single call while waiting: a hung call is retried before the timeout ends. */
    private static final long MAX_CALL_MILLIS = 10_000;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Option(
            names = "--for",
            required = true,
            paramLabel = "enforced",
            description = "The condition: enforced (the only one).")
    String condition;

    @Parameters(
            arity = "1..*",
            paramLabel = "KIND/NAMESPACE/NAME",
            description = "networkpolicy/NS/NAME, adminnetworkpolicy/NAME, baselineadminnetworkpolicy/NAME, "
                    + "clusternetworkpolicy/NAME (kubectl's short names too).")
    List<String> named;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!"enforced".equals(condition)) {
            err.println("--for: only 'enforced' is known, not '" + condition + "'");
            err.flush();
            return ExitCodes.USAGE;
        }
        for (String n : named) {
            try {
                PolicyRef.parse(n);
            } catch (IllegalArgumentException e) {
                err.println(e.getMessage());
                err.flush();
                return ExitCodes.USAGE;
            }
        }
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        try {
            return waitFor(channel, out, err);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }

    private int waitFor(ManagedChannel channel, PrintWriter out, PrintWriter err) throws InterruptedException {
        long deadline = System.nanoTime() + client.timeout.toNanos();
        ListPolicyReceiptsRequest request =
                ListPolicyReceiptsRequest.newBuilder().addAllPolicies(named).build();
        ListPolicyReceiptsResponse last = null;
        StatusRuntimeException lastError = null;
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            try {
                last = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(Math.max(1, Math.min(left, MAX_CALL_MILLIS)), TimeUnit.MILLISECONDS)
                        .listPolicyReceipts(request);
                lastError = null;
                if (last.getUnknownCount() == 0
                        && last.getReceiptsList().stream().allMatch(PolicyReceipt::getEnforced)) {
                    last.getReceiptsList().forEach(r -> out.println(ReceiptText.met(r)));
                    out.flush();
                    return ExitCodes.OK;
                }
            } catch (StatusRuntimeException e) {
                if (!transientFailure(e.getStatus().getCode())) {
                    return client.failed(err, e);
                }
                lastError = e; // a control plane restarting or not ready yet: ask again
            }
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(INTERVAL.toMillis()) - deadline >= 0) {
                break;
            }
            Thread.sleep(INTERVAL.toMillis());
        }
        if (last == null) {
            return client.failed(err, lastError); // never answered
        }
        err.println("timed out after " + Durations.compact(client.timeout) + " waiting for enforced:");
        for (PolicyReceipt r : last.getReceiptsList()) {
            if (!r.getEnforced()) {
                err.println("  " + ReceiptText.unmet(r));
            }
        }
        for (String unknown : last.getUnknownList()) {
            err.println("  " + unknown + ": not known to the control plane (not seen yet, or deleted)");
        }
        err.flush();
        return ExitCodes.NEGATIVE;
    }

    private static boolean transientFailure(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
    }
}
