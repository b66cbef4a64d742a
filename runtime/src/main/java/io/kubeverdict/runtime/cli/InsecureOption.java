// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/**
 * {@code --insecure}: plaintext gRPC, or a server that authenticates nobody, only on purpose.
 * Without it such a server may listen only on a loopback address, where nobody but the node's own
 * processes can reach it.
 */
public final class InsecureOption {
    @Option(
            names = "--insecure",
            description = "Allow plaintext gRPC (or, on the control plane, --auth none) on an address other than "
                    + "loopback (anyone who can reach it can read what it serves). Without it, such a server listens "
                    + "on loopback only.")
    boolean insecure;

    public boolean insecure() {
        return insecure;
    }

    /**
     * Throws {@link IllegalArgumentException} naming {@code option} when a plaintext server would
     * listen on {@code address} (null: none) other than loopback without {@code --insecure}.
     */
    public void checkPlaintextListen(String option, HostPort listen) {
        if (listen == null || insecure || isLoopback(listen.socketAddress())) {
            return;
        }
        throw new IllegalArgumentException(option + " " + listen + " is not a loopback address and "
                + "the server has no TLS: give it TLS, listen on 127.0.0.1 or [::1], or pass --insecure to serve "
                + "plaintext on purpose");
    }

    /**
     * Throws {@link IllegalArgumentException} naming {@code option} when a server that authenticates
     * nobody ({@code auth}, e.g. "--auth none") would listen on {@code listen} other than loopback
     * without {@code --insecure}: TLS without client identity hides the traffic from the path, not
     * the service from whoever connects.
     */
    public void checkUnauthenticatedListen(String option, HostPort listen, String auth) {
        if (listen == null || insecure || isLoopback(listen.socketAddress())) {
            return;
        }
        throw new IllegalArgumentException(option + " " + listen + " is not a loopback address and " + auth
                + " lets anyone who connects sync and inspect every node: authenticate the clients, listen on "
                + "127.0.0.1 or [::1], or pass --insecure to serve it unauthenticated on purpose");
    }

    /**
     * Throws {@link IllegalArgumentException} naming {@code option} and {@code why} when a plaintext
     * client would send secrets to {@code target} other than loopback without {@code --insecure}.
     * Only literals and {@code localhost} count as loopback (no DNS lookup here).
     */
    public void checkPlaintextTarget(String option, HostPort target, String why) {
        if (insecure || isLoopback(target.host())) {
            return;
        }
        throw new IllegalArgumentException(option + " " + target + " is not a loopback address and " + why
                + ", or pass --insecure to send it in plaintext on purpose");
    }

    private static boolean isLoopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!host.matches("[0-9.]+") && host.indexOf(':') < 0) {
            return false; // a DNS name: not resolved here
        }
        try {
            return java.net.InetAddress.getByName(host).isLoopbackAddress(); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    static boolean isLoopback(InetSocketAddress address) {
        return address.getAddress() != null && address.getAddress().isLoopbackAddress();
    }
}
