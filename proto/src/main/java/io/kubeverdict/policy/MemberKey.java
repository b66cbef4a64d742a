// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.Protocol;
import java.util.Locale;

/**
 * An IP-set member as an address-table key: an address (type IP), or "address,protocol:port"
 * (type IP_AND_PORT: ext = protocol << 16 | port). {@code v4} says which family's table holds it.
 */
record MemberKey(boolean v4, long hi, long lo, int ext) {

    /** The key of a member of a set of this type, or null when the member is unusable. */
    static MemberKey parse(String member, IpSetType type) {
        if (type == IpSetType.IP) {
            IpAddress a = IpAddress.tryParse(member);
            return a == null ? null : new MemberKey(a.family() == IpAddress.V4, a.hi(), a.lo(), 0);
        }
        return type == IpSetType.IP_AND_PORT ? named(member) : null;
    }

    /** "address,protocol:port" -> key, or null. */
    private static MemberKey named(String member) {
        int comma = member.indexOf(',');
        if (comma < 0) {
            return null;
        }
        IpAddress a = IpAddress.tryParse(member.substring(0, comma));
        String rest = member.substring(comma + 1);
        int colon = rest.indexOf(':');
        if (a == null || colon < 0) {
            return null;
        }
        int protocol = switch (rest.substring(0, colon).toLowerCase(Locale.ROOT)) {
            case "tcp" -> Protocol.TCP_VALUE;
            case "udp" -> Protocol.UDP_VALUE;
            case "sctp" -> Protocol.SCTP_VALUE;
            default -> -1;
        };
        String p = rest.substring(colon + 1);
        if (protocol < 0 || p.isEmpty() || p.length() > 5 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return null;
        }
        int port = Integer.parseInt(p);
        if (port < 1 || port > 65535) {
            return null;
        }
        return new MemberKey(a.family() == IpAddress.V4, a.hi(), a.lo(), protocol << 16 | port);
    }

    /**
     * The one spelling of this key ("10.0.0.1", "fd00::1,tcp:80"). Two spellings of one key are one
     * member to the index but two to a set of strings, so only canonical members are changed in place.
     */
    String canonical() {
        String address = (v4 ? IpAddress.v4((int) lo) : IpAddress.v6(hi, lo)).toString();
        if (ext == 0) {
            return address;
        }
        String protocol = switch (ext >>> 16) {
            case Protocol.TCP_VALUE -> "tcp";
            case Protocol.UDP_VALUE -> "udp";
            default -> "sctp";
        };
        return address + "," + protocol + ":" + (ext & 0xFFFF);
    }
}
