package io.kubeverdict.agent.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "agent", mixinStandardHelpOptions = true,
        description = "Enforce this node's policies: sync from the control plane, program nftables, decide queued packets.")
final class RunCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("agent: not implemented yet");
        return 2;
    }
}
