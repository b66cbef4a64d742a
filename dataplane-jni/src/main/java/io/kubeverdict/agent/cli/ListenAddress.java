package io.kubeverdict.agent.cli;

import java.net.InetSocketAddress;

/** Parses listen addresses as operators write them: "HOST:PORT", ":PORT", "[::1]:PORT"; "" or "off" disables. */
final class ListenAddress {
    private ListenAddress() {}

    static InetSocketAddress parse(String text) {
        if (text == null || text.isBlank() || text.equals("off")) {
            return null;
        }
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("expected HOST:PORT or :PORT, got " + text);
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in " + text);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("bad port in " + text);
        }
        return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    }
}
