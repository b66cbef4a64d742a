// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.flow.TcpEchoServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A node namespace routing between two dual-stack pod namespaces: a (10.77.0.2, fd77::2) and
 * b (10.77.1.2, fd77:1::2), each
 * behind a veth pair whose node side is the pod's gateway. TCP echo servers listen in b. All
 * namespaces carry the given prefix and are deleted by {@link #close()}.
 */
public final class PodPair implements AutoCloseable {
    public static final String A_IP = "10.77.0.2";
    public static final String B_IP = "10.77.1.2";
    public static final String A_IP6 = "fd77::2";
    public static final String B_IP6 = "fd77:1::2";

    public final TestNamespace node;
    public final TestNamespace a;
    public final TestNamespace b;
    private final List<TcpEchoServer> servers = new ArrayList<>();
    private volatile String lastFailure = "none";

    private PodPair(TestNamespace node, TestNamespace a, TestNamespace b) {
        this.node = node;
        this.a = a;
        this.b = b;
    }

    public static PodPair create(String prefix) throws Exception {
        List<TestNamespace> made = new ArrayList<>();
        try {
            TestNamespace node = TestNamespace.create(prefix);
            made.add(node);
            TestNamespace a = TestNamespace.create(prefix);
            made.add(a);
            TestNamespace b = TestNamespace.create(prefix);
            made.add(b);
            wire(node, a, "va", "10.77.0.1", A_IP, "fd77::1", A_IP6);
            wire(node, b, "vb", "10.77.1.1", B_IP, "fd77:1::1", B_IP6);
            // after the links exist: "all" reaches every existing interface
            node.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            node.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            return new PodPair(node, a, b);
        } catch (Exception e) {
            for (TestNamespace ns : made) {
                ns.close();
            }
            throw e;
        }
    }

    private static void wire(
            TestNamespace node,
            TestNamespace pod,
            String hostSide,
            String gateway,
            String ip,
            String gateway6,
            String ip6)
            throws Exception {
        node.exec("ip", "link", "add", hostSide, "type", "veth", "peer", "name", "eth0", "netns", pod.name());
        node.exec("ip", "addr", "add", gateway + "/24", "dev", hostSide);
        node.exec("ip", "-6", "addr", "add", gateway6 + "/64", "dev", hostSide, "nodad");
        node.exec("ip", "link", "set", hostSide, "up");
        pod.exec("ip", "addr", "add", ip + "/24", "dev", "eth0");
        pod.exec("ip", "-6", "addr", "add", ip6 + "/64", "dev", "eth0", "nodad");
        pod.exec("ip", "link", "set", "eth0", "up");
        pod.exec("ip", "route", "add", "default", "via", gateway);
        pod.exec("ip", "-6", "route", "add", "default", "via", gateway6);
    }

    /** An echo server on b:port, serving on daemon threads until close. */
    public void echoServerOnB(int port) throws Exception {
        servers.add(TcpEchoServer.start(b.inside(), port));
    }

    /** A connection from a to b:port (socket made in a's namespace), or null when it times out. */
    public Socket connectAToB(int port, int timeoutMillis) throws Exception {
        return connectAToB(B_IP, port, timeoutMillis);
    }

    /** A connection from a to one of b's addresses, or null when it times out. */
    public Socket connectAToB(String bAddress, int port, int timeoutMillis) throws Exception {
        // Java creates the socket's fd lazily at connect: connect on the namespace's thread.
        return Netns.call(a.path(), () -> {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(bAddress, port), timeoutMillis);
                socket.setSoTimeout(5000);
                return socket;
            } catch (IOException e) {
                lastFailure = e.toString();
                socket.close();
                return null;
            }
        });
    }

    /** Whether a fresh connection a -> b:port is established and echoes a byte. */
    public boolean canConnect(int port, int timeoutMillis) throws Exception {
        return canConnect(B_IP, port, timeoutMillis);
    }

    /** Whether a fresh connection a -> bAddress:port is established and echoes a byte. */
    public boolean canConnect(String bAddress, int port, int timeoutMillis) throws Exception {
        try (Socket s = connectAToB(bAddress, port, timeoutMillis)) {
            return s != null && echoes(s);
        }
    }

    /**
     * Waits until a reaches b:port over both families (fresh veths need a moment before IPv6
     * routes through them); fails after 10 s with the last error.
     */
    public void awaitConnectivity(int port) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!(canConnect(B_IP, port, 1000) && canConnect(B_IP6, port, 1000))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("pods never reached each other: " + lastFailure);
            }
            Thread.sleep(100);
        }
    }

    /** Why the last failed connect failed, for assertion messages. */
    public String lastFailure() {
        return lastFailure;
    }

    public static boolean echoes(Socket s) {
        try {
            s.getOutputStream().write(42);
            s.getOutputStream().flush();
            return s.getInputStream().read() == 42;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws Exception {
        for (TcpEchoServer s : servers) {
            s.close();
        }
        Exception first = null;
        for (TestNamespace ns : List.of(a, b, node)) {
            try {
                ns.close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
