package io.kubeverdict.controlplane.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "explain", mixinStandardHelpOptions = true,
        description = "Explain the verdict for one connection, from manifests.")
final class ExplainCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("explain: not implemented yet");
        return 2;
    }
}
