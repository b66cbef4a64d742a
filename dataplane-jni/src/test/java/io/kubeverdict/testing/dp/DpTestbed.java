// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import io.kubeverdict.testing.TestNamespace;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The data plane's small testbed: two pods (network namespaces "client" and "server") routed
 * through a third namespace, the "node", where our table and queue live. IPv4 and IPv6:
 * <pre>
 *   client eth0 10.77.1.2/24 fd77:1::2/64  ==  node c0 10.77.1.1 fd77:1::1
 *   server eth0 10.77.2.2/24 fd77:2::2/64  ==  node s0 10.77.2.1 fd77:2::1
 * </pre>
 * Namespaces are named kvt-dp-*; {@link #close()} removes them all (veths die with them).
 */
public final class DpTestbed implements AutoCloseable {
    public static final String CLIENT4 = "10.77.1.2";
    public static final String SERVER4 = "10.77.2.2";
    public static final String NODE4 = "10.77.1.1";
    public static final String CLIENT6 = "fd77:1::2";
    public static final String SERVER6 = "fd77:2::2";

    public final TestNamespace node;
    public final TestNamespace client;
    public final TestNamespace server;
    private final List<AutoCloseable> resources = new ArrayList<>();

    private DpTestbed(TestNamespace node, TestNamespace client, TestNamespace server) {
        this.node = node;
        this.client = client;
        this.server = server;
    }

    public static DpTestbed create() throws IOException, InterruptedException {
        List<TestNamespace> made = new ArrayList<>();
        try {
            TestNamespace node = TestNamespace.create("kvt-dp-n");
            made.add(node);
            TestNamespace client = TestNamespace.create("kvt-dp-c");
            made.add(client);
            TestNamespace server = TestNamespace.create("kvt-dp-s");
            made.add(server);
            for (TestNamespace ns : made) {
                // no duplicate address detection: addresses (also link-local ones) work at once
                ns.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0");
                ns.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0");
            }
            node.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            node.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            wire(node, "c0", client, "10.77.1", "fd77:1:");
            wire(node, "s0", server, "10.77.2", "fd77:2:");
            return new DpTestbed(node, client, server);
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (TestNamespace ns : made) {
                try {
                    ns.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** A veth from the node to a pod, made directly inside the two namespaces. */
    private static void wire(TestNamespace node, String nodeIf, TestNamespace pod, String v4, String v6)
            throws IOException, InterruptedException {
        node.exec("ip", "link", "add", nodeIf, "type", "veth", "peer", "name", "eth0", "netns", pod.name());
        node.exec("ip", "addr", "add", v4 + ".1/24", "dev", nodeIf);
        node.exec("ip", "addr", "add", v6 + ":1/64", "dev", nodeIf, "nodad");
        node.exec("ip", "link", "set", nodeIf, "up");
        pod.exec("ip", "addr", "add", v4 + ".2/24", "dev", "eth0");
        pod.exec("ip", "addr", "add", v6 + ":2/64", "dev", "eth0", "nodad");
        pod.exec("ip", "link", "set", "eth0", "up");
        pod.exec("ip", "route", "add", "default", "via", v4 + ".1");
        pod.exec("ip", "-6", "route", "add", "default", "via", v6 + ":1");
    }

    /** Echo servers (TCP and UDP, IPv4 and IPv6) on these ports in a namespace, closed with the bed. */
    public EchoServers serve(TestNamespace ns, int... ports) throws Exception {
        EchoServers servers = EchoServers.start(ns, ports);
        resources.add(servers);
        return servers;
    }

    /** Closes with the bed (before the namespaces go). */
    public <T extends AutoCloseable> T own(T resource) {
        resources.add(resource);
        return resource;
    }

    @Override
    public void close() throws Exception {
        Exception failure = null;
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                failure = failure == null ? e : failure;
            }
        }
        for (TestNamespace ns : List.of(client, server, node)) {
            try {
                ns.close();
            } catch (Exception e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
