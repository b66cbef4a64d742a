// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.runtime.cli.KubeVerdictCommand;
import java.util.List;
import picocli.CommandLine;

/** Entry point of the control-plane jar: {@code kube-verdict} with the service, the offline tools and the live CLI. */
public final class ControlPlaneMain {
    private static final String DESCRIPTION =
            "kube-verdict control plane, policy tools (offline and live) and cluster status.";

    private ControlPlaneMain() {}

    /** This jar's subcommands, fresh instances: for its own root and for a CLI that assembles several jars'. */
    public static List<Object> subcommands() {
        return List.of(
                new ServeCommand(),
                new MatrixCommand(),
                new ExplainCommand(),
                new StatusCommand(),
                new PoliciesCommand(),
                new ObserveCommand(),
                new FlowsCommand(),
                new WhatIfCommand(),
                new RecommendCommand(),
                new WaitCommand());
    }

    public static CommandLine commandLine() {
        return KubeVerdictCommand.root(DESCRIPTION, subcommands().toArray());
    }

    public static void main(String[] args) {
        System.exit(KubeVerdictCommand.forArgs(DESCRIPTION, args, subcommands().toArray())
                .execute(args));
    }
}
