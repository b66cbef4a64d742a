// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Protocol;
import java.util.Arrays;
import java.util.TreeSet;

/**
 * The destination ports of every rule's numbered clauses cut into classes: per protocol with
 * ports (TCP, UDP, SCTP), the elementary ranges between the clauses' boundaries, numbered across
 * the three from 1 (0: no clause of that protocol at all). Within a class each clause holds every
 * port or none, so a program keeps one port mask per class ({@link Program#portsByClass}) and a
 * packet's numbered ports cost a read of its class here and one of the program's mask, instead of
 * a search per program. Made with the rules ({@link CompiledRules}), as the programs are, so the
 * two always agree. Past {@link #MAX_CLASSES} nothing is numbered and programs search.
 */
final class PortClasses {

    /** The most classes numbered: each program holds a long per class. */
    static final int MAX_CLASSES = 1024;
    /** The class of a packet whose protocol has no ports: only rules without ports match it. */
    static final int NO_PORTS = -1;

    static final PortClasses NONE = new PortClasses(new int[3][], new int[3], 0);

    private static final int[] PROTOCOLS = {Protocol.TCP_VALUE, Protocol.UDP_VALUE, Protocol.SCTP_VALUE};

    // Per protocol (TCP, UDP, SCTP): port -> class, or null when no clause names the protocol.
    private final char[] tcp;
    private final char[] udp;
    private final char[] sctp;
    // Per protocol: the first port of each of its classes, and the class of the first.
    private final int[][] starts;
    private final int[] firstClass;
    private final int count;

    private PortClasses(int[][] starts, int[] firstClass, int count) {
        this.starts = starts;
        this.firstClass = firstClass;
        this.count = count;
        this.tcp = table(starts[0], firstClass[0]);
        this.udp = table(starts[1], firstClass[1]);
        this.sctp = table(starts[2], firstClass[2]);
    }

    private static char[] table(int[] starts, int first) {
        if (starts == null) {
            return null;
        }
        char[] classes = new char[1 << 16];
        for (int i = 0; i < starts.length; i++) {
            int end = i + 1 < starts.length ? starts[i + 1] : classes.length;
            Arrays.fill(classes, starts[i], end, (char) (first + i));
        }
        return classes;
    }

    /** The classes of the rules' numbered clauses (named and unusable clauses match no numbered port). */
    static PortClasses of(int[] protocol, int[] lo, int[] hi, int[] namedSet) {
        int[][] starts = new int[3][];
        int[] firstClass = new int[3];
        int next = 1;
        for (int p = 0; p < 3; p++) {
            TreeSet<Integer> points = new TreeSet<>();
            for (int q = 0; q < protocol.length; q++) {
                if (protocol[q] == PROTOCOLS[p] && namedSet[q] == SnapshotCompiler.NOT_NAMED) {
                    points.add(lo[q]);
                    if (hi[q] < 65535) {
                        points.add(hi[q] + 1);
                    }
                }
            }
            if (points.isEmpty()) {
                continue;
            }
            points.add(0);
            starts[p] = points.stream().mapToInt(Integer::intValue).toArray();
            firstClass[p] = next;
            next += starts[p].length;
            if (next > MAX_CLASSES) {
                return NONE;
            }
        }
        return new PortClasses(starts, firstClass, next);
    }

    /** The packet's class: 0 when no clause names its protocol (or the port is out of range), {@link #NO_PORTS} for protocols without ports. */
    int classOf(int protocol, int port) {
        char[] classes;
        switch (protocol) {
            case Protocol.TCP_VALUE -> classes = tcp;
            case Protocol.UDP_VALUE -> classes = udp;
            case Protocol.SCTP_VALUE -> classes = sctp;
            default -> {
                return NO_PORTS;
            }
        }
        return classes == null || port >>> 16 != 0 ? 0 : classes[port];
    }

    /** Each class's mask in a program's maps (one per protocol, as {@link Program#ports}); null when nothing is numbered. */
    long[] masksOf(MaskMap tcpPorts, MaskMap udpPorts, MaskMap sctpPorts) {
        if (count == 0) {
            return null;
        }
        long[] masks = new long[count];
        MaskMap[] maps = {tcpPorts, udpPorts, sctpPorts};
        for (int p = 0; p < 3; p++) {
            if (starts[p] != null) {
                for (int i = 0; i < starts[p].length; i++) {
                    masks[firstClass[p] + i] = maps[p].get(0, starts[p][i]);
                }
            }
        }
        return masks;
    }
}
