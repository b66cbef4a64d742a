// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import io.kubeverdict.jni.NetnsThread;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * TCP and UDP listeners on every pod's ports, all served by one selector thread: TCP connections
 * are accepted and closed (the handshake is the answer), UDP datagrams are echoed. Each socket is
 * opened by its pod's {@link NetnsThread}, so it listens inside that pod's namespace (on the
 * wildcard address, both families); a hostNetwork pod's in its node's namespace, at the node's
 * addresses.
 */
final class PodServers implements AutoCloseable {
    private final Selector selector;
    private final List<Channel> channels = new ArrayList<>();
    private final Thread loop;

    PodServers(List<PodSpec> pods, Map<String, NetnsThread> threads) throws Exception {
        this.selector = Selector.open();
        try {
            // One listener per namespace and port: hostNetwork pods of a node share its namespace.
            Map<NetnsThread, Set<ServePort>> served = new LinkedHashMap<>();
            for (PodSpec pod : pods) {
                served.computeIfAbsent(threads.get(pod.name()), t -> new LinkedHashSet<>())
                        .addAll(pod.ports());
            }
            for (Map.Entry<NetnsThread, Set<ServePort>> e : served.entrySet()) {
                NetnsThread thread = e.getKey();
                for (ServePort port : e.getValue()) {
                    switch (port.protocol()) {
                        case TCP -> {
                            ServerSocketChannel server = thread.call(() -> {
                                ServerSocketChannel s = ServerSocketChannel.open();
                                s.bind(new InetSocketAddress(port.port()), 512);
                                return s;
                            });
                            channels.add(server);
                            server.configureBlocking(false);
                            server.register(selector, SelectionKey.OP_ACCEPT);
                        }
                        case UDP -> {
                            DatagramChannel server =
                                    thread.call(() -> DatagramChannel.open().bind(new InetSocketAddress(port.port())));
                            channels.add(server);
                            server.configureBlocking(false);
                            server.register(selector, SelectionKey.OP_READ);
                        }
                        case SCTP -> {} // no SCTP sockets on the kernels we run on; probes say UNSUPPORTED
                        default -> throw new IllegalArgumentException("cannot serve " + port);
                    }
                }
            }
        } catch (Exception e) {
            close();
            throw e;
        }
        this.loop = new Thread(this::serve, "testbed-servers");
        loop.setDaemon(true);
        loop.start();
    }

    private void serve() {
        ByteBuffer buffer = ByteBuffer.allocate(1500);
        while (selector.isOpen()) {
            try {
                selector.select();
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() instanceof ServerSocketChannel server) {
                        SocketChannel accepted;
                        while ((accepted = server.accept()) != null) {
                            accepted.close();
                        }
                    } else if (key.channel() instanceof DatagramChannel udp) {
                        SocketAddress from;
                        while ((from = udp.receive(buffer.clear())) != null) {
                            udp.send(buffer.flip(), from);
                        }
                    }
                }
                selector.selectedKeys().clear();
            } catch (IOException | RuntimeException e) {
                if (!selector.isOpen()) {
                    return;
                }
                // one bad datagram or reset must not stop every server
            }
        }
    }

    @Override
    public void close() throws IOException {
        selector.close();
        for (Channel c : channels) {
            c.close();
        }
        if (loop != null) {
            try {
                loop.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
