// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import io.kubeverdict.policy.IpAddress;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * One pod of the testbed: its name "namespace/name", the node it runs on, its addresses and the
 * ports it serves. A hostNetwork pod has no namespace of its own: it serves and probes in its
 * node's namespace, and its addresses are among the node's.
 */
public record PodSpec(String name, String node, List<InetAddress> ips, List<ServePort> ports, boolean hostNetwork) {
    public PodSpec {
        if (ips.isEmpty()) {
            throw new IllegalArgumentException("pod " + name + " has no IP");
        }
        ips = List.copyOf(ips);
        ports = List.copyOf(ports);
    }

    /** A pod with a network namespace of its own. */
    public PodSpec(String name, String node, List<InetAddress> ips, List<ServePort> ports) {
        this(name, node, ips, ports, false);
    }

    /**
     * An IP literal as the socket API wants it, parsed by the verdict function's {@link IpAddress}:
     * never a name lookup (InetAddress.getByName would resolve a host name).
     *
     * @throws IllegalArgumentException when text is not an IP literal
     */
    public static InetAddress address(String text) {
        IpAddress ip = IpAddress.parse(text);
        byte[] bytes = new byte[ip.family() == IpAddress.V4 ? 4 : 16];
        for (int i = 0; i < bytes.length; i++) {
            int fromEnd = bytes.length - 1 - i;
            long word = fromEnd < 8 ? ip.lo() : ip.hi();
            bytes[i] = (byte) (word >>> (8 * (fromEnd % 8)));
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible); // only for a wrong length
        }
    }

    /** The address probes go to: the first IPv4 address, else the first address. */
    public InetAddress primaryIp() {
        return ips.stream().filter(ip -> ip instanceof Inet4Address).findFirst().orElse(ips.get(0));
    }

    /** The address a probe from source goes to: IPv4 when both have one, else a family both share. */
    public InetAddress addressFrom(PodSpec source) {
        for (boolean v4 : new boolean[] {true, false}) {
            boolean sourceHas = source.ips().stream().anyMatch(ip -> (ip instanceof Inet4Address) == v4);
            for (InetAddress ip : ips) {
                if (sourceHas && (ip instanceof Inet4Address) == v4) {
                    return ip;
                }
            }
        }
        return primaryIp();
    }
}
