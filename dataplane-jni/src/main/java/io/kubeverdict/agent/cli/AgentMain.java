// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.cli;

import io.kubeverdict.runtime.cli.KubeVerdictCommand;
import java.util.List;
import picocli.CommandLine;

/** Entry point of the agent jar: {@code kube-verdict agent}, the node agent only. */
public final class AgentMain {
    private static final String DESCRIPTION = "kube-verdict data plane agent.";

    private AgentMain() {}

    /** This jar's subcommands, fresh instances: for its own root and for a CLI that assembles several jars'. */
    public static List<Object> subcommands() {
        return List.of(new RunCommand());
    }

    public static CommandLine commandLine() {
        return KubeVerdictCommand.root(DESCRIPTION, subcommands().toArray());
    }

    public static void main(String[] args) {
        System.exit(KubeVerdictCommand.forArgs(DESCRIPTION, args, subcommands().toArray())
                .execute(args));
    }
}
