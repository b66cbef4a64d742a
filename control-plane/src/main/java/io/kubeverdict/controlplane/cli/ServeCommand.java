package io.kubeverdict.controlplane.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "control-plane", mixinStandardHelpOptions = true,
        description = "Watch the cluster (or a manifest directory) and stream per-node policy snapshots to agents.")
final class ServeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("control-plane: not implemented yet");
        return 2;
    }
}
