// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code kube-verdict version}: what {@code --version} prints, as kubectl spells it. */
@Command(name = "version", description = "Print the version of kube-verdict.")
final class VersionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        for (String line : new VersionProvider().getVersion()) {
            spec.commandLine().getOut().println(line);
        }
        spec.commandLine().getOut().flush();
        return 0;
    }
}
