// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import io.kubeverdict.policy.IpAddress;
import java.nio.ByteBuffer;

/** Writes conntrack entries in the shim's layout, for tests of code that reads dumps. */
public final class ConntrackEntriesFixture {
    private ConntrackEntriesFixture() {}

    /** One entry as a dump would deliver it. */
    public record Entry(
            int protocol,
            IpAddress originalSource,
            int sourcePort,
            IpAddress originalDestination,
            int destinationPort,
            IpAddress replySource,
            int replySourcePort,
            int mark,
            int id,
            int tcpState) {

        /** An entry without NAT: the reply comes from where the connection was sent. */
        public static Entry of(int protocol, String src, int sport, String dst, int dport, int mark, int id) {
            IpAddress d = IpAddress.parse(dst);
            return new Entry(
                    protocol, IpAddress.parse(src), sport, d, dport, d, dport, mark, id, protocol == 6 ? 3 : -1);
        }

        public Entry withMark(int newMark) {
            return new Entry(
                    protocol,
                    originalSource,
                    sourcePort,
                    originalDestination,
                    destinationPort,
                    replySource,
                    replySourcePort,
                    newMark,
                    id,
                    tcpState);
        }

        public Entry withTcpState(int state) {
            return new Entry(
                    protocol,
                    originalSource,
                    sourcePort,
                    originalDestination,
                    destinationPort,
                    replySource,
                    replySourcePort,
                    mark,
                    id,
                    state);
        }
    }

    public static void clear(ConntrackEntries e) {
        e.size(0);
    }

    /** Appends an entry (growing the buffer, which only works before the first one is added). */
    public static void add(ConntrackEntries e, Entry entry) {
        int i = e.size();
        if (i >= e.capacity()) {
            throw new IllegalStateException("fixture buffer full: make it larger");
        }
        ByteBuffer b = e.buffer();
        int at = i * ConntrackEntries.ENTRY_SIZE;
        for (int k = 0; k < ConntrackEntries.ENTRY_SIZE; k++) {
            b.put(at + k, (byte) 0);
        }
        int family = entry.originalSource().family();
        b.put(at + ConntrackEntries.FAMILY, (byte) family);
        b.put(at + ConntrackEntries.PROTOCOL, (byte) entry.protocol());
        b.put(at + ConntrackEntries.TCP_STATE, (byte) (entry.tcpState() < 0 ? 0xff : entry.tcpState()));
        boolean ports = entry.protocol() == 6 || entry.protocol() == 17 || entry.protocol() == 132;
        b.put(at + ConntrackEntries.HAS_PORTS, (byte) (ports ? 1 : 0));
        b.putShort(at + ConntrackEntries.ORIG_SPORT, (short) entry.sourcePort());
        b.putShort(at + ConntrackEntries.ORIG_DPORT, (short) entry.destinationPort());
        b.putShort(at + ConntrackEntries.REPLY_SPORT, (short) entry.replySourcePort());
        b.putInt(at + ConntrackEntries.MARK, entry.mark());
        b.putInt(at + ConntrackEntries.ID, entry.id());
        address(b, at + ConntrackEntries.ORIG_SRC, entry.originalSource());
        address(b, at + ConntrackEntries.ORIG_DST, entry.originalDestination());
        address(b, at + ConntrackEntries.REPLY_SRC, entry.replySource());
        e.size(i + 1);
    }

    private static void address(ByteBuffer b, int at, IpAddress a) {
        if (a.family() == IpAddress.V4) {
            int v = (int) a.lo();
            b.put(at, (byte) (v >>> 24))
                    .put(at + 1, (byte) (v >>> 16))
                    .put(at + 2, (byte) (v >>> 8))
                    .put(at + 3, (byte) v);
            return;
        }
        for (int i = 0; i < 8; i++) {
            b.put(at + i, (byte) (a.hi() >>> (56 - 8 * i)));
            b.put(at + 8 + i, (byte) (a.lo() >>> (56 - 8 * i)));
        }
    }
}
