package io.kubeverdict.testbed;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;

/**
 * One pod of the testbed: its name "namespace/name", the node it runs on, its addresses and the
 * ports it serves.
 */
public record PodSpec(String name, String node, List<InetAddress> ips, List<ServePort> ports) {
    public PodSpec {
        if (ips.isEmpty()) {
            throw new IllegalArgumentException("pod " + name + " has no IP");
        }
        ips = List.copyOf(ips);
        ports = List.copyOf(ports);
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
