// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Tuple;

/**
 * A reusable, mutable view of one packet's addresses, protocol and destination port, filled by
 * the packet parser and read by {@link SnapshotIndex#decide}: no allocation per packet.
 * IPv4 addresses live in the low 32 bits of {@code srcLo}/{@code dstLo} with hi = 0 and family 4.
 * The source port rides along for what is shown of a verdict ({@code observe}); nothing decides
 * on it, and the setters below clear it.
 */
public final class PacketTuple {
    public int family;
    public long srcHi;
    public long srcLo;
    public long dstHi;
    public long dstLo;
    public int protocol;
    public int dstPort;
    /** The parser's source port (0 without ports); only shown, never matched. */
    public int srcPort;

    public PacketTuple setV4(int src, int dst, int protocol, int dstPort) {
        this.family = IpAddress.V4;
        this.srcHi = 0;
        this.srcLo = src & 0xFFFF_FFFFL;
        this.dstHi = 0;
        this.dstLo = dst & 0xFFFF_FFFFL;
        this.protocol = protocol;
        this.dstPort = dstPort;
        this.srcPort = 0;
        return this;
    }

    public PacketTuple setV6(long srcHi, long srcLo, long dstHi, long dstLo, int protocol, int dstPort) {
        this.family = IpAddress.V6;
        this.srcHi = srcHi;
        this.srcLo = srcLo;
        this.dstHi = dstHi;
        this.dstLo = dstLo;
        this.protocol = protocol;
        this.dstPort = dstPort;
        this.srcPort = 0;
        return this;
    }

    /** Fills from two addresses of the same family; throws when the families differ. */
    public PacketTuple set(IpAddress src, IpAddress dst, int protocol, int dstPort) {
        if (src.family() != dst.family()) {
            throw new IllegalArgumentException("source " + src + " and destination " + dst + " differ in family");
        }
        this.family = src.family();
        this.srcHi = src.hi();
        this.srcLo = src.lo();
        this.dstHi = dst.hi();
        this.dstLo = dst.lo();
        this.protocol = protocol;
        this.dstPort = dstPort;
        this.srcPort = 0;
        return this;
    }

    /** Parses a Tuple's addresses (allocates; for tools, not for the hot path). */
    public static PacketTuple of(Tuple tuple) {
        return new PacketTuple()
                .set(
                        IpAddress.parse(tuple.getSrcIp()),
                        IpAddress.parse(tuple.getDstIp()),
                        tuple.getProtocol(),
                        tuple.getDstPort());
    }

    public IpAddress source() {
        return new IpAddress(family, srcHi, srcLo);
    }

    public IpAddress destination() {
        return new IpAddress(family, dstHi, dstLo);
    }

    /** The protobuf form, for verdict logs and explain (allocates). */
    public Tuple toTuple() {
        return Tuple.newBuilder()
                .setSrcIp(source().toString())
                .setDstIp(destination().toString())
                .setProtocol(protocol)
                .setDstPort(dstPort)
                .setSrcPort(srcPort)
                .build();
    }

    @Override
    public String toString() {
        return source() + " -> " + destination() + " proto " + protocol + " port " + dstPort;
    }
}
