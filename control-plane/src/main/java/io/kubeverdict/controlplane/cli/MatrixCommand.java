package io.kubeverdict.controlplane.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "matrix", mixinStandardHelpOptions = true,
        description = "Print which endpoint pods may open new connections to which, from manifests.")
final class MatrixCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("matrix: not implemented yet");
        return 2;
    }
}
