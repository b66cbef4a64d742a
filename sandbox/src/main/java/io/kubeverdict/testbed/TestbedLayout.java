// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The names, addresses and iproute2 batch scripts of one testbed; pure, so it can be read and
 * tested without root.
 *
 * <pre>
 *            fabric netns:  br0 (100.64.255.254/24, fd00:6b76::fffe/64)
 *             /      \
 *   n0 | fab0          n1 | fab0          veth pairs; node i has .(i+1)
 *   node netns 0       node netns 1       forwarding on; /32 (/128) route per pod:
 *    p0 | eth0          p1 | eth0            local pods via their veth, others via their node
 *   pod netns          pod netns          pod: its IPs on eth0, default route via 169.254.1.1 / fe80::1
 * </pre>
 *
 * A node may have addresses of its own (its Node object's): they sit on fab0 beside the fabric
 * address, every other node routes them via that node's fabric address, and the node's routes
 * use them as source, so what a node (or a hostNetwork pod on it) sends comes from its own
 * address. hostNetwork pods have no namespace: they live in their node's.
 */
public final class TestbedLayout {
    static final String GATEWAY4 = "169.254.1.1";
    static final String GATEWAY6 = "fe80::1";

    private final String runName;
    private final List<String> nodes;
    private final Map<String, List<InetAddress>> nodeIps;
    private final List<PodSpec> pods;

    /** runName is the common prefix of every namespace, e.g. "kvt-sb-4242". Nodes have their fabric addresses. */
    public TestbedLayout(String runName, List<String> nodes, List<PodSpec> pods) {
        this(runName, nodes, Map.of(), pods);
    }

    /**
     * nodeIps: a node's own addresses (as its Node object has them), held on its fabric link
     * besides the fabric address and used as the source of what the node sends; a node without
     * an entry is addressed by its fabric address. hostNetwork pods must use their node's addresses.
     */
    public TestbedLayout(
            String runName, List<String> nodes, Map<String, List<InetAddress>> nodeIps, List<PodSpec> pods) {
        this.runName = runName;
        this.nodes = List.copyOf(nodes);
        Map<String, List<InetAddress>> ips = new LinkedHashMap<>();
        nodeIps.forEach((node, list) -> {
            if (!nodes.contains(node)) {
                throw new IllegalArgumentException("addresses for unknown node " + node);
            }
            if (!list.isEmpty()) {
                ips.put(node, List.copyOf(list));
            }
        });
        this.nodeIps = Map.copyOf(ips);
        this.pods = List.copyOf(pods);
        for (PodSpec pod : pods) {
            if (!nodes.contains(pod.node())) {
                throw new IllegalArgumentException("pod " + pod.name() + " is on unknown node " + pod.node());
            }
            if (pod.hostNetwork() && !hostAddresses(pod.node()).containsAll(pod.ips())) {
                throw new IllegalArgumentException("hostNetwork pod " + pod.name() + " has addresses " + pod.ips()
                        + " that its node " + pod.node() + " does not have " + hostAddresses(pod.node()));
            }
        }
    }

    public String runName() {
        return runName;
    }

    public List<String> nodes() {
        return nodes;
    }

    public List<PodSpec> pods() {
        return pods;
    }

    public String fabricNamespace() {
        return runName + "-fab";
    }

    public String nodeNamespace(String node) {
        return runName + "-n" + indexOfNode(node);
    }

    /** The namespace a pod's sockets live in: its own, or its node's for a hostNetwork pod. */
    public String podNamespace(String pod) {
        for (int i = 0; i < pods.size(); i++) {
            if (pods.get(i).name().equals(pod)) {
                return pods.get(i).hostNetwork() ? nodeNamespace(pods.get(i).node()) : runName + "-p" + i;
            }
        }
        throw new IllegalArgumentException("unknown pod " + pod);
    }

    /** The fabric's own address, where services for every node (the control plane) listen. */
    public String fabricAddress() {
        return "100.64.255.254";
    }

    public String nodeAddress(String node) {
        return fabricNodeAddress(indexOfNode(node));
    }

    /** The fabric address of the node at this index of the node list. */
    public static String fabricNodeAddress(int index) {
        return "100.64.255." + (index + 1);
    }

    String nodeAddress6(String node) {
        return "fd00:6b76::" + Integer.toHexString(indexOfNode(node) + 1);
    }

    /**
     * The node's own addresses: those it was given, else its fabric address(es). hostNetwork pods
     * serve there and what the node sends comes from there.
     */
    public List<InetAddress> hostAddresses(String node) {
        List<InetAddress> given = nodeIps.get(node);
        if (given != null) {
            return given;
        }
        List<InetAddress> fabric = new ArrayList<>(List.of(PodSpec.address(nodeAddress(node))));
        if (ipv6()) {
            fabric.add(PodSpec.address(nodeAddress6(node)));
        }
        return fabric;
    }

    /** The source address of what the node sends in a family: its first own address of it, else its fabric one. */
    private String source(String node, boolean v4) {
        List<InetAddress> given = nodeIps.getOrDefault(node, List.of());
        return given.stream()
                .filter(ip -> (ip instanceof Inet4Address) == v4)
                .findFirst()
                .map(InetAddress::getHostAddress)
                .orElse(v4 ? nodeAddress(node) : nodeAddress6(node));
    }

    /** Given node addresses that are not the fabric's, which the node adds to its fabric link. */
    private List<InetAddress> extraAddresses(String node) {
        return nodeIps.getOrDefault(node, List.of()).stream()
                .filter(ip -> !ip.getHostAddress().equals(nodeAddress(node))
                        && !ip.equals(PodSpec.address(nodeAddress6(node))))
                .toList();
    }

    boolean ipv6() {
        return pods.stream().flatMap(p -> p.ips().stream()).anyMatch(ip -> ip instanceof Inet6Address)
                || nodeIps.values().stream().flatMap(List::stream).anyMatch(ip -> ip instanceof Inet6Address);
    }

    /** Every namespace, fabric first. */
    public List<String> namespaces() {
        List<String> all = new ArrayList<>();
        all.add(fabricNamespace());
        nodes.forEach(n -> all.add(nodeNamespace(n)));
        pods.stream().filter(p -> !p.hostNetwork()).forEach(p -> all.add(podNamespace(p.name())));
        return all;
    }

    /** Root-namespace batch: only "netns add", nothing else touches the root namespace. */
    String createNamespacesScript() {
        StringBuilder s = new StringBuilder();
        namespaces().forEach(ns -> s.append("netns add ").append(ns).append('\n'));
        return s.toString();
    }

    /** Fabric batch: the bridge and one veth per node, whose other end lands in the node. */
    String fabricScript() {
        StringBuilder s = new StringBuilder("link set lo up\n")
                .append("link add br0 type bridge\n")
                .append("addr add ")
                .append(fabricAddress())
                .append("/24 dev br0\n");
        if (ipv6()) {
            s.append("addr add fd00:6b76::fffe/64 dev br0 nodad\n");
        }
        s.append("link set br0 up\n");
        for (int i = 0; i < nodes.size(); i++) {
            String node = nodes.get(i);
            s.append("link add n")
                    .append(i)
                    .append(" type veth peer name fab0 netns ")
                    .append(nodeNamespace(node))
                    .append('\n')
                    .append("link set n")
                    .append(i)
                    .append(" master br0\n")
                    .append("link set n")
                    .append(i)
                    .append(" up\n");
        }
        return s.toString();
    }

    /**
     * Node batch: fabric address and the node's own addresses, a veth per local pod, a host route
     * to every pod and to the other nodes' own addresses, each from this node's own address.
     */
    String nodeScript(String node) {
        StringBuilder s = new StringBuilder("link set lo up\n")
                .append("addr add ")
                .append(nodeAddress(node))
                .append("/24 dev fab0\n");
        if (ipv6()) {
            s.append("addr add ").append(nodeAddress6(node)).append("/64 dev fab0 nodad\n");
        }
        for (InetAddress ip : extraAddresses(node)) {
            s.append("addr add ")
                    .append(host(ip))
                    .append(" dev fab0")
                    .append(ip instanceof Inet4Address ? "" : " nodad")
                    .append('\n');
        }
        s.append("link set fab0 up\n");
        for (int i = 0; i < pods.size(); i++) {
            PodSpec pod = pods.get(i);
            if (!pod.node().equals(node) || pod.hostNetwork()) {
                continue;
            }
            String dev = "p" + i;
            s.append("link add ")
                    .append(dev)
                    .append(" type veth peer name eth0 netns ")
                    .append(podNamespace(pod.name()))
                    .append('\n')
                    .append("addr add ")
                    .append(GATEWAY4)
                    .append("/32 dev ")
                    .append(dev)
                    .append('\n');
            if (ipv6()) {
                s.append("addr add ")
                        .append(GATEWAY6)
                        .append("/64 dev ")
                        .append(dev)
                        .append(" nodad\n");
            }
            s.append("link set ").append(dev).append(" up\n");
        }
        for (int i = 0; i < pods.size(); i++) {
            PodSpec pod = pods.get(i);
            if (pod.hostNetwork()) {
                continue;
            }
            for (InetAddress ip : pod.ips()) {
                String from = source(node, ip instanceof Inet4Address);
                if (pod.node().equals(node)) {
                    s.append("route add ")
                            .append(host(ip))
                            .append(" dev p")
                            .append(i)
                            .append(" src ")
                            .append(from)
                            .append('\n');
                } else {
                    s.append("route add ")
                            .append(host(ip))
                            .append(" via ")
                            .append(via(pod.node(), ip))
                            .append(" src ")
                            .append(from)
                            .append('\n');
                }
            }
        }
        for (String other : nodes) {
            if (!other.equals(node)) {
                for (InetAddress ip : extraAddresses(other)) {
                    s.append("route add ")
                            .append(host(ip))
                            .append(" via ")
                            .append(via(other, ip))
                            .append(" src ")
                            .append(source(node, ip instanceof Inet4Address))
                            .append('\n');
                }
            }
        }
        return s.toString();
    }

    private static String host(InetAddress ip) {
        return ip.getHostAddress() + (ip instanceof Inet4Address ? "/32" : "/128");
    }

    /** The next hop to an address of node, in the address's family. */
    private String via(String node, InetAddress ip) {
        return ip instanceof Inet4Address ? nodeAddress(node) : nodeAddress6(node);
    }

    /** Pod batch: its addresses on eth0 and a default route through its node. */
    String podScript(PodSpec pod) {
        StringBuilder s = new StringBuilder("link set lo up\nlink set eth0 up\n");
        boolean has4 = false;
        boolean has6 = false;
        for (InetAddress ip : pod.ips()) {
            if (ip instanceof Inet4Address) {
                s.append("addr add ").append(ip.getHostAddress()).append("/32 dev eth0\n");
                has4 = true;
            } else {
                s.append("addr add ").append(ip.getHostAddress()).append("/128 dev eth0 nodad\n");
                has6 = true;
            }
        }
        if (has4) {
            s.append("route add ")
                    .append(GATEWAY4)
                    .append(" dev eth0 scope link\n")
                    .append("route add default via ")
                    .append(GATEWAY4)
                    .append(" dev eth0\n");
        }
        if (has6) {
            s.append("route add default via ").append(GATEWAY6).append(" dev eth0\n");
        }
        return s.toString();
    }

    /** Sysctls per namespace: forwarding on nodes, no duplicate address detection delays. */
    Map<String, List<String>> sysctls() {
        Map<String, List<String>> all = new LinkedHashMap<>();
        List<String> noDad = List.of("net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        List<String> node = new ArrayList<>(List.of("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"));
        node.addAll(noDad);
        all.put(fabricNamespace(), noDad);
        nodes.forEach(n -> all.put(nodeNamespace(n), node));
        if (ipv6()) {
            pods.stream().filter(p -> !p.hostNetwork()).forEach(p -> all.put(podNamespace(p.name()), noDad));
        }
        return all;
    }

    private int indexOfNode(String node) {
        int i = nodes.indexOf(node);
        if (i < 0) {
            throw new IllegalArgumentException("unknown node " + node);
        }
        return i;
    }
}
