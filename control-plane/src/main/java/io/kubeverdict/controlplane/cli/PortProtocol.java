// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.Protocol;
import java.util.Locale;

/**
 * The one spelling of a destination everywhere in the output: {@code 80/TCP}, {@code 53/UDP};
 * protocols without ports by name alone ({@code ICMP}); unknown numbers as {@code proto 47}.
 */
final class PortProtocol {
    private PortProtocol() {}

    static String format(int port, int protocol) {
        String name = name(protocol);
        return hasPorts(protocol) ? port + "/" + name : name;
    }

    static boolean hasPorts(int protocol) {
        return protocol == Protocol.TCP_VALUE || protocol == Protocol.UDP_VALUE || protocol == Protocol.SCTP_VALUE;
    }

    /** TCP, UDP, SCTP, ICMP, ICMPv6 (the proto enum's protocols), or "proto N". */
    static String name(int protocol) {
        if (protocol == Protocol.ICMPV6_VALUE) {
            return "ICMPv6";
        }
        Protocol p = Protocol.forNumber(protocol);
        return p == null || p == Protocol.PROTOCOL_UNSPECIFIED ? "proto " + protocol : p.name();
    }

    /** TCP/UDP/SCTP/ICMP/ICMPv6 in any case, or an IANA number 0-255; -1 when neither. */
    static int parse(String text) {
        String t = text.toUpperCase(Locale.ROOT);
        for (Protocol p : Protocol.values()) {
            if (p != Protocol.PROTOCOL_UNSPECIFIED
                    && p != Protocol.UNRECOGNIZED
                    && p.name().equals(t)) {
                return p.getNumber();
            }
        }
        try {
            int n = Integer.parseInt(text);
            return n >= 0 && n <= 255 ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
