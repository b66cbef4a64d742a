package io.kubeverdict.sandbox;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where each pod runs and which addresses it has; pure and deterministic. A pod keeps the node
 * and IPs its manifest gives. The others, in "namespace/name" order, are spread round-robin over
 * nodes "node-1".."node-N" and take the lowest free addresses of the pod CIDR (skipping its
 * network address), the same rule as `matrix --assign-ips CIDR`.
 */
public record Placement(List<String> nodes, Map<String, String> nodeOf, Map<String, List<String>> ipsOf) {
    public static final String DEFAULT_POD_CIDR = "10.244.0.0/16";

    public static Placement of(List<SandboxPod> pods, int spreadNodes, String podCidr) {
        List<SandboxPod> all = pods.stream().sorted(Comparator.comparing(SandboxPod::name)).toList();
        TreeSet<String> nodes = new TreeSet<>();
        Map<String, String> nodeOf = new LinkedHashMap<>();
        int spread = 0;
        for (SandboxPod pod : all) {
            if (!pod.runnable()) {
                continue;
            }
            String node = pod.node();
            if (node == null || node.isEmpty()) {
                node = "node-" + (spread++ % spreadNodes + 1);
            }
            nodes.add(node);
            nodeOf.put(pod.name(), node);
        }
        Set<String> used = new HashSet<>();
        all.forEach(p -> used.addAll(p.ips()));
        Map<String, List<String>> ipsOf = new LinkedHashMap<>();
        Cidr cidr = Cidr.parse(podCidr);
        long next = 1;
        // Like `matrix --assign-ips`: every non-hostNetwork pod without an address takes one in
        // name order, so the numbering is the same even when some of them are not run.
        for (SandboxPod pod : all) {
            if (pod.hostNetwork()) {
                continue;
            }
            List<String> ips = pod.ips();
            if (ips.isEmpty()) {
                String ip;
                do {
                    ip = cidr.address(next++);
                } while (used.contains(ip));
                used.add(ip);
                ips = List.of(ip);
            }
            if (pod.runnable()) {
                ipsOf.put(pod.name(), ips);
            }
        }
        return new Placement(new ArrayList<>(nodes), nodeOf, ipsOf);
    }

    /** An IPv4 block "a.b.c.d/len". */
    record Cidr(long base, int length) {
        static Cidr parse(String text) {
            String[] parts = text.split("/");
            try {
                InetAddress address = InetAddress.getByName(parts[0]);
                if (!(address instanceof Inet4Address) || parts.length != 2) {
                    throw new IllegalArgumentException("pod CIDR must be IPv4 a.b.c.d/len: " + text);
                }
                long base = 0;
                for (byte b : address.getAddress()) {
                    base = (base << 8) | (b & 0xff);
                }
                int length = Integer.parseInt(parts[1]);
                long mask = length == 0 ? 0 : (0xffffffffL << (32 - length)) & 0xffffffffL;
                return new Cidr(base & mask, length);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("bad pod CIDR " + text, e);
            }
        }

        String address(long offset) {
            if (offset >= (1L << (32 - length)) - 1) {
                throw new IllegalArgumentException("pod CIDR too small for the pods");
            }
            long a = base + offset;
            return ((a >> 24) & 0xff) + "." + ((a >> 16) & 0xff) + "." + ((a >> 8) & 0xff) + "." + (a & 0xff);
        }
    }
}
