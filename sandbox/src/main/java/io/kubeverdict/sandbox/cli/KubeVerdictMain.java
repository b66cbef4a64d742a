// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox.cli;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.runtime.cli.KubeVerdictCommand;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * Entry point of the developer CLI (sandbox/target/kube-verdict.jar, what bin/kube-verdict runs):
 * every subcommand under one root. The control plane's and the agent's commands are the same
 * objects their own jars' roots use, so each exists once and parses here exactly as in its image.
 */
public final class KubeVerdictMain {
    private static final String DESCRIPTION =
            "kube-verdict: control plane, node agent, offline policy tools and the local sandbox.";

    private KubeVerdictMain() {}

    public static void main(String[] args) {
        System.exit(KubeVerdictCommand.forArgs(DESCRIPTION, args, subcommands().toArray())
                .execute(args));
    }

    /** The root command with control-plane, matrix, explain (control plane), agent and sandbox. */
    public static CommandLine commandLine() {
        return KubeVerdictCommand.root(DESCRIPTION, subcommands().toArray());
    }

    private static List<Object> subcommands() {
        List<Object> all = new ArrayList<>(ControlPlaneMain.subcommands());
        all.addAll(AgentMain.subcommands());
        all.add(new SandboxCommand());
        return all;
    }
}
