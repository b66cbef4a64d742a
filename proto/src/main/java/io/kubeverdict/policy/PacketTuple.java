package io.kubeverdict.policy;

/**
 * A reusable, mutable view of one packet's addresses, protocol and destination port, filled by
 * the packet parser and read by {@link SnapshotIndex#decide}: no allocation per packet.
 * IPv4 addresses live in the low 32 bits of {@code srcLo}/{@code dstLo} with hi = 0 and family 4.
 */
public final class PacketTuple {
    public int family;
    public long srcHi;
    public long srcLo;
    public long dstHi;
    public long dstLo;
    public int protocol;
    public int dstPort;
}
