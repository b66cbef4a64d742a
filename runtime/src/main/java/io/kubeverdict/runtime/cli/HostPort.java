// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import io.kubeverdict.policy.IpAddress;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * An address as operators write it: {@code HOST:PORT}, {@code [IPv6]:PORT}, or {@code :PORT} (every
 * local address; listen addresses only). HOST is an IPv4 literal, a bracketed IPv6 literal or a
 * DNS name; an IPv6 literal without brackets is refused (in {@code ::1:80} the port is a guess).
 * Literals are stored canonical. Nothing is resolved while parsing.
 *
 * @param host "" for every local address; IPv6 without brackets
 */
public record HostPort(String host, int port) {
    private static final int MAX_PORT = 65535;

    /** An address to listen on: port 0 (any free one) allowed, host optional. */
    public static HostPort parseListen(String text) {
        return parse(text, true);
    }

    /** An address to connect to: host required, port 1-65535. */
    public static HostPort parseTarget(String text) {
        return parse(text, false);
    }

    /** The socket address to bind: literals as they are, DNS names resolved now. */
    public InetSocketAddress socketAddress() {
        if (host.isEmpty()) {
            return new InetSocketAddress(port);
        }
        try {
            // A literal (checked while parsing) is converted without any lookup.
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot resolve " + host + " (in " + this + ")");
        }
    }

    /** {@code host:port}, {@code [v6]:port} or {@code :port}: parses back to this, and is a gRPC target. */
    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    private static HostPort parse(String text, boolean listen) {
        String form = listen ? "HOST:PORT, [IPv6]:PORT or :PORT" : "HOST:PORT or [IPv6]:PORT";
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("expected " + form + ", got an empty address");
        }
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("expected [IPv6]:PORT, got \"" + text + "\"");
            }
            IpAddress v6 = IpAddress.tryParse(text.substring(1, close));
            if (v6 == null || v6.family() != IpAddress.V6) {
                throw new IllegalArgumentException("not an IPv6 address in brackets: \"" + text + "\"");
            }
            host = v6.toString();
            port = text.substring(close + 2);
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("expected " + form + ", got \"" + text + "\"");
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw new IllegalArgumentException(
                        "an IPv6 address needs brackets, as in [::1]:9443, got \"" + text + "\"");
            }
            if (host.isEmpty() && !listen) {
                throw new IllegalArgumentException("expected " + form + " with a host, got \"" + text + "\"");
            }
            if (!host.isEmpty()) {
                host = hostName(host, text);
            }
        }
        return new HostPort(host, port(port, listen ? 0 : 1, text));
    }

    /** An IPv4 literal (canonical) or a DNS name (RFC 1123 labels). */
    private static String hostName(String host, String text) {
        if (host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
            IpAddress v4 = IpAddress.tryParse(host);
            if (v4 == null) {
                throw new IllegalArgumentException("not an IPv4 address: \"" + host + "\" in \"" + text + "\"");
            }
            return v4.toString();
        }
        String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        boolean valid = !name.isEmpty() && name.length() <= 253;
        for (String label : name.split("\\.", -1)) {
            valid &= label.matches("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
        }
        if (!valid) {
            throw new IllegalArgumentException("not a host name or IP address: \"" + host + "\" in \"" + text + "\"");
        }
        return host;
    }

    private static int port(String digits, int min, String text) {
        if (digits.isEmpty() || digits.length() > 5 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException(
                    "bad port \"" + digits + "\" in \"" + text + "\": want a number " + min + "-" + MAX_PORT);
        }
        int port = Integer.parseInt(digits);
        if (port < min || port > MAX_PORT) {
            throw new IllegalArgumentException(
                    "port " + port + " out of range " + min + "-" + MAX_PORT + " in \"" + text + "\"");
        }
        return port;
    }

    /** picocli: a listen address. */
    public static final class Listen implements ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            try {
                return parseListen(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** picocli: a listen address, or {@code off} / empty for none (null). */
    public static final class ListenOrOff implements ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            return value.isBlank() || value.equals("off") ? null : new Listen().convert(value);
        }
    }

    /** picocli: an address to connect to. */
    public static final class Target implements ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            try {
                return parseTarget(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
