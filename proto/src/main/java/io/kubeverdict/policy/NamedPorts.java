// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Protocol;

/**
 * The (protocol, port) pairs of TCP, UDP and SCTP that some named-port set member names: a packet
 * to any other port has no named-port membership, so {@link SnapshotIndex#decide} does not probe
 * the named-port table for it. A superset is harmless (the probe then finds nothing), so updates
 * only add pairs (a copy when one is new) and a full compile makes it exact again.
 */
final class NamedPorts {

    private static final int PORTS = 1 << 16;

    private final long[] bits; // TCP, UDP, SCTP: a bit per port each

    private NamedPorts(long[] bits) {
        this.bits = bits;
    }

    /** The pairs of these named-port table keys (ext = protocol << 16 | port). */
    static NamedPorts of(KeyedMembers... tables) {
        long[] bits = new long[3 * PORTS / 64];
        for (KeyedMembers keys : tables) {
            for (int i = 0; i < keys.size(); i++) {
                int bit = bit(keys.ext(i));
                if (bit >= 0) {
                    bits[bit >>> 6] |= 1L << bit;
                }
            }
        }
        return new NamedPorts(bits);
    }

    /** The pair's bit, or -1 for protocols without ports (never filtered). */
    private static int bit(int ext) {
        int port = ext & 0xFFFF;
        return switch (ext >>> 16) {
            case Protocol.TCP_VALUE -> port;
            case Protocol.UDP_VALUE -> PORTS + port;
            case Protocol.SCTP_VALUE -> 2 * PORTS + port;
            default -> -1;
        };
    }

    /** False when no named-port member has this protocol and port (other protocols: true, the probe decides). */
    boolean mayHave(int protocol, int port) {
        int bit = port >>> 16 != 0 ? -1 : bit(protocol << 16 | port);
        return bit < 0 || (bits[bit >>> 6] & 1L << bit) != 0;
    }

    /** These pairs and the key's; this instance (never written after it is shared) when it already has it. */
    NamedPorts with(int ext) {
        int bit = bit(ext);
        if (bit < 0 || (bits[bit >>> 6] & 1L << bit) != 0) {
            return this;
        }
        long[] copy = bits.clone();
        copy[bit >>> 6] |= 1L << bit;
        return new NamedPorts(copy);
    }
}
