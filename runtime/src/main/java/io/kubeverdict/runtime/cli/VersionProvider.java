// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import io.kubeverdict.runtime.BuildVersion;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: {@code kube-verdict 0.1.0}, the project version the jar was built as. */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        return new String[] {"kube-verdict " + BuildVersion.current()};
    }
}
