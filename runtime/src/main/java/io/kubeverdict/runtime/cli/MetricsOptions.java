// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/** {@code --metrics-bind-address}: where the metrics endpoint (/metrics and the health paths) listens. */
public final class MetricsOptions {
    @Option(
            names = "--metrics-bind-address",
            paramLabel = "HOST:PORT",
            converter = HostPort.ListenOrOff.class,
            description = "HTTP address of Prometheus /metrics and the health paths (HOST:PORT, [IPv6]:PORT or :PORT); "
                    + "off or empty disables. Default: ${DEFAULT-VALUE}.")
    HostPort bind;

    /** @param defaultAddress this process's default, e.g. {@code :9101} */
    public MetricsOptions(String defaultAddress) {
        this.bind = HostPort.parseListen(defaultAddress);
    }

    /** null when disabled. */
    public HostPort bind() {
        return bind;
    }

    /** The address to bind, or null when disabled. */
    public InetSocketAddress socketAddress() {
        return bind == null ? null : bind.socketAddress();
    }
}
