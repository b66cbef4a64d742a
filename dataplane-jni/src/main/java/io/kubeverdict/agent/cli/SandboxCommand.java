package io.kubeverdict.agent.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "sandbox", mixinStandardHelpOptions = true,
        description = "Run the whole system locally: pods as network namespaces, real agents, a probed connectivity matrix.")
final class SandboxCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("sandbox: not implemented yet");
        return 2;
    }
}
