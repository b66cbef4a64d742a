// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import io.kubeverdict.policy.IpAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The entries of one conntrack dump, in a direct buffer the shim fills (one JNI call per dump, no
 * call per entry): fixed-size records whose layout is the shim's kv_layout.h, checked at load by
 * {@link NfqLayout}. The agent streams dumps through one of a fixed size; a whole dump
 * ({@link Conntrack#dump(ConntrackQuery, ConntrackEntries)}) grows it. Not thread-safe.
 */
public final class ConntrackEntries {
    static final int ENTRY_SIZE = 80;
    static final int FAMILY = 0;
    static final int PROTOCOL = 1;
    static final int ZONE = 2;
    static final int TCP_STATE = 4;
    static final int HAS_PORTS = 5;
    static final int ORIG_SPORT = 8;
    static final int ORIG_DPORT = 10;
    static final int REPLY_SPORT = 12;
    static final int REPLY_DPORT = 14;
    static final int MARK = 16;
    static final int ID = 20;
    static final int STATUS = 24;
    static final int ORIG_SRC = 32;
    static final int ORIG_DST = 48;
    static final int REPLY_SRC = 64;

    /** TCP_CONNTRACK_ESTABLISHED: the only TCP state in which data flows both ways. */
    public static final int TCP_ESTABLISHED = 3;

    private ByteBuffer buffer;
    private int capacity;
    private int size;

    public ConntrackEntries(int initialCapacity) {
        allocate(Math.max(16, initialCapacity));
    }

    private void allocate(int entries) {
        capacity = entries;
        buffer = ByteBuffer.allocateDirect(entries * ENTRY_SIZE).order(ByteOrder.nativeOrder());
        size = 0;
    }

    ByteBuffer buffer() {
        return buffer;
    }

    /** How many entries the buffer holds (one dump, or one chunk of a streamed dump). */
    public int capacity() {
        return capacity;
    }

    /** Twice the room, the entries kept. */
    void grow() {
        ByteBuffer old = buffer;
        int n = size;
        allocate(capacity * 2);
        buffer.put(0, old, 0, n * ENTRY_SIZE);
        size = n;
    }

    void size(int n) {
        size = n;
    }

    public int size() {
        return size;
    }

    /** 4 or 6. */
    public int family(int i) {
        return buffer.get(at(i) + FAMILY);
    }

    public int protocol(int i) {
        return buffer.get(at(i) + PROTOCOL) & 0xff;
    }

    public int zone(int i) {
        return buffer.getShort(at(i) + ZONE) & 0xffff;
    }

    /** The TCP_CONNTRACK_* state, or -1 for other protocols. */
    public int tcpState(int i) {
        int s = buffer.get(at(i) + TCP_STATE) & 0xff;
        return s == 0xff ? -1 : s;
    }

    /** Whether the tuples carry ports (TCP, UDP, SCTP, ...). */
    public boolean hasPorts(int i) {
        return buffer.get(at(i) + HAS_PORTS) != 0;
    }

    /** The opener's port (ICMP: the echo id). */
    public int originalSourcePort(int i) {
        return buffer.getShort(at(i) + ORIG_SPORT) & 0xffff;
    }

    /** The port the connection was opened to, before DNAT (ICMP: type << 8 | code). */
    public int originalDestinationPort(int i) {
        return buffer.getShort(at(i) + ORIG_DPORT) & 0xffff;
    }

    /** The answering side's port: the destination port after DNAT; 0 without ports. */
    public int replySourcePort(int i) {
        return buffer.getShort(at(i) + REPLY_SPORT) & 0xffff;
    }

    public int mark(int i) {
        return buffer.getInt(at(i) + MARK);
    }

    /** The kernel's id of the entry (a recreated entry with the same tuple has another). */
    public int id(int i) {
        return buffer.getInt(at(i) + ID);
    }

    /** IPS_* status bits. */
    public int status(int i) {
        return buffer.getInt(at(i) + STATUS);
    }

    /** Who opened the connection. */
    public IpAddress originalSource(int i) {
        return address(i, ORIG_SRC);
    }

    /** Where the connection was sent (before DNAT). */
    public IpAddress originalDestination(int i) {
        return address(i, ORIG_DST);
    }

    /** Who answers: the connection's destination after DNAT. */
    public IpAddress replySource(int i) {
        return address(i, REPLY_SRC);
    }

    /** Address words without allocating: word 0 = hi, 1 = lo (IPv4 in the low 32 bits of lo). */
    public long originalSourceWord(int i, int word) {
        return addressWord(i, ORIG_SRC, word);
    }

    public long replySourceWord(int i, int word) {
        return addressWord(i, REPLY_SRC, word);
    }

    private IpAddress address(int i, int field) {
        return new IpAddress(family(i), addressWord(i, field, 0), addressWord(i, field, 1));
    }

    private long addressWord(int i, int field, int word) {
        int at = at(i) + field;
        if (family(i) == IpAddress.V4) {
            return word == 0 ? 0 : Integer.toUnsignedLong(bigEndianInt(at));
        }
        int w = at + 8 * word;
        return ((long) bigEndianInt(w) << 32) | Integer.toUnsignedLong(bigEndianInt(w + 4));
    }

    private int bigEndianInt(int at) {
        int v = buffer.getInt(at);
        return buffer.order() == ByteOrder.BIG_ENDIAN ? v : Integer.reverseBytes(v);
    }

    private int at(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("entry " + i + " of " + size);
        }
        return i * ENTRY_SIZE;
    }

    /** "tcp 10.0.0.1:34567 -> 10.0.0.2:80" for logs (allocates). */
    public String describe(int i) {
        String proto = switch (protocol(i)) {
            case 6 -> "tcp";
            case 17 -> "udp";
            case 132 -> "sctp";
            case 1 -> "icmp";
            case 58 -> "icmpv6";
            default -> "proto " + protocol(i);
        };
        return proto + " " + originalSource(i) + (hasPorts(i) ? ":" + originalSourcePort(i) : "") + " -> "
                + replySource(i) + (hasPorts(i) ? ":" + replySourcePort(i) : "") + " (id "
                + Integer.toUnsignedString(id(i)) + ")";
    }
}
