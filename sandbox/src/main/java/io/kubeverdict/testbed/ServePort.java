// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import io.kubeverdict.proto.v1.Protocol;
import java.util.Locale;

/**
 * A port a pod listens on, like one containerPort of a Pod manifest. The protocol is the wire
 * contract's enum (its numbers are the IP protocol numbers), one of TCP, UDP and SCTP.
 */
public record ServePort(int port, Protocol protocol) {
    public ServePort {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if (protocol != Protocol.TCP && protocol != Protocol.UDP && protocol != Protocol.SCTP) {
            throw new IllegalArgumentException("protocol must be TCP, UDP or SCTP: " + protocol);
        }
    }

    /** Parses "80/TCP" or "53/udp"; the protocol defaults to TCP like in Kubernetes. */
    public static ServePort parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            return new ServePort(Integer.parseInt(text.trim()), Protocol.TCP);
        }
        return new ServePort(
                Integer.parseInt(text.substring(0, slash).trim()), parseProtocol(text.substring(slash + 1)));
    }

    /** "TCP", "udp", ... as Kubernetes writes them (case-insensitive). */
    public static Protocol parseProtocol(String text) {
        return switch (text.trim().toUpperCase(Locale.ROOT)) {
            case "TCP" -> Protocol.TCP;
            case "UDP" -> Protocol.UDP;
            case "SCTP" -> Protocol.SCTP;
            default -> throw new IllegalArgumentException("protocol must be TCP, UDP or SCTP: " + text);
        };
    }

    @Override
    public String toString() {
        return port + "/" + protocol.name();
    }
}
