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
 */
public final class TestbedLayout {
    static final String GATEWAY4 = "169.254.1.1";
    static final String GATEWAY6 = "fe80::1";

    private final String runName;
    private final List<String> nodes;
    private final List<PodSpec> pods;

    /** runName is the common prefix of every namespace, e.g. "kvt-sb-4242". */
    public TestbedLayout(String runName, List<String> nodes, List<PodSpec> pods) {
        this.runName = runName;
        this.nodes = List.copyOf(nodes);
        this.pods = List.copyOf(pods);
        for (PodSpec pod : pods) {
            if (!nodes.contains(pod.node())) {
                throw new IllegalArgumentException("pod " + pod.name() + " is on unknown node " + pod.node());
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

    public String podNamespace(String pod) {
        for (int i = 0; i < pods.size(); i++) {
            if (pods.get(i).name().equals(pod)) {
                return runName + "-p" + i;
            }
        }
        throw new IllegalArgumentException("unknown pod " + pod);
    }

    /** The fabric's own address, where services for every node (the control plane) listen. */
    public String fabricAddress() {
        return "100.64.255.254";
    }

    public String nodeAddress(String node) {
        return "100.64.255." + (indexOfNode(node) + 1);
    }

    String nodeAddress6(String node) {
        return "fd00:6b76::" + Integer.toHexString(indexOfNode(node) + 1);
    }

    boolean ipv6() {
        return pods.stream().flatMap(p -> p.ips().stream()).anyMatch(ip -> ip instanceof Inet6Address);
    }

    /** Every namespace, fabric first. */
    public List<String> namespaces() {
        List<String> all = new ArrayList<>();
        all.add(fabricNamespace());
        nodes.forEach(n -> all.add(nodeNamespace(n)));
        pods.forEach(p -> all.add(podNamespace(p.name())));
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
                .append("addr add ").append(fabricAddress()).append("/24 dev br0\n");
        if (ipv6()) {
            s.append("addr add fd00:6b76::fffe/64 dev br0 nodad\n");
        }
        s.append("link set br0 up\n");
        for (int i = 0; i < nodes.size(); i++) {
            String node = nodes.get(i);
            s.append("link add n").append(i).append(" type veth peer name fab0 netns ")
                    .append(nodeNamespace(node)).append('\n')
                    .append("link set n").append(i).append(" master br0\n")
                    .append("link set n").append(i).append(" up\n");
        }
        return s.toString();
    }

    /** Node batch: fabric address, a veth per local pod, a host route to every pod. */
    String nodeScript(String node) {
        StringBuilder s = new StringBuilder("link set lo up\n")
                .append("addr add ").append(nodeAddress(node)).append("/24 dev fab0\n");
        if (ipv6()) {
            s.append("addr add ").append(nodeAddress6(node)).append("/64 dev fab0 nodad\n");
        }
        s.append("link set fab0 up\n");
        for (int i = 0; i < pods.size(); i++) {
            PodSpec pod = pods.get(i);
            if (!pod.node().equals(node)) {
                continue;
            }
            String dev = "p" + i;
            s.append("link add ").append(dev).append(" type veth peer name eth0 netns ")
                    .append(podNamespace(pod.name())).append('\n')
                    .append("addr add ").append(GATEWAY4).append("/32 dev ").append(dev).append('\n');
            if (ipv6()) {
                s.append("addr add ").append(GATEWAY6).append("/64 dev ").append(dev).append(" nodad\n");
            }
            s.append("link set ").append(dev).append(" up\n");
        }
        for (int i = 0; i < pods.size(); i++) {
            PodSpec pod = pods.get(i);
            for (InetAddress ip : pod.ips()) {
                boolean v4 = ip instanceof Inet4Address;
                String host = ip.getHostAddress() + (v4 ? "/32" : "/128");
                if (pod.node().equals(node)) {
                    s.append("route add ").append(host).append(" dev p").append(i)
                            .append(" src ").append(v4 ? nodeAddress(node) : nodeAddress6(node)).append('\n');
                } else {
                    s.append("route add ").append(host).append(" via ")
                            .append(v4 ? nodeAddress(pod.node()) : nodeAddress6(pod.node())).append('\n');
                }
            }
        }
        return s.toString();
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
            s.append("route add ").append(GATEWAY4).append(" dev eth0 scope link\n")
                    .append("route add default via ").append(GATEWAY4).append(" dev eth0\n");
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
            pods.forEach(p -> all.put(podNamespace(p.name()), noDad));
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
