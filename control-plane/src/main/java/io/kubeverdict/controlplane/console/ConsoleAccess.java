// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.kubeverdict.policy.IpAddress;
import java.net.InetSocketAddress;
import java.util.Locale;

/**
 * The console's first gate, before the inspection service's own: a request must carry a bearer
 * token or come from a loopback address ({@code kubectl port-forward}, or the sandbox's forward),
 * else it is refused (401) whatever the control plane's {@code --auth}. With {@code --auth none}
 * a token proves nothing, so only loopback is let in. A loopback request must also name a loopback
 * or literal host ({@code Host}), so a web page whose name was re-bound to 127.0.0.1 (DNS
 * rebinding) cannot read the console through the operator's browser.
 */
final class ConsoleAccess {
    /** Whether bearer tokens are reviewed (the control plane's {@code --auth token}). */
    private final boolean tokens;

    ConsoleAccess(boolean tokens) {
        this.tokens = tokens;
    }

    /** The viewer to ask the inspection service as, or why not (then {@code viewer} is null). */
    record Decision(Viewer viewer, int status, String why) {}

    Decision decide(String authorization, InetSocketAddress peer, String host) {
        boolean loopback =
                peer != null && peer.getAddress() != null && peer.getAddress().isLoopbackAddress();
        if (authorization != null && tokens) {
            return new Decision(new Viewer(authorization, peer), 200, null);
        }
        if (!loopback) {
            return new Decision(
                    null,
                    401,
                    tokens
                            ? "the console needs a bearer token (a user the API server lets get /kube-verdict/inspect)"
                                    + " or a connection through kubectl port-forward"
                            : "with --auth none the console answers only on loopback (kubectl port-forward)");
        }
        if (!loopbackHost(host)) {
            return new Decision(null, 403, "a loopback request must name localhost or an address as its host");
        }
        return new Decision(new Viewer(null, peer), 200, null);
    }

    /** localhost, or a literal address, with or without a port. */
    static boolean loopbackHost(String host) {
        if (host == null || host.isBlank()) {
            return false;
        }
        String h = host.strip().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end > 0 && literal(h.substring(1, end));
        }
        int colon = h.lastIndexOf(':');
        String name = colon >= 0 ? h.substring(0, colon) : h;
        return name.equals("localhost") || literal(name);
    }

    private static boolean literal(String name) {
        return IpAddress.tryParse(name) != null;
    }
}
