package io.kubeverdict.controlplane.cli;

import picocli.CommandLine.IVersionProvider;

/** The version from the jar manifest (the Maven project version). */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = VersionProvider.class.getPackage().getImplementationVersion();
        return new String[] {"kube-verdict " + (v == null ? "dev" : v)};
    }
}
