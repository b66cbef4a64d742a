// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.flow;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/** A UDP echo server on one port of a namespace (all addresses, both families), on a daemon thread. */
public final class UdpEchoServer implements AutoCloseable {
    private final DatagramSocket socket;

    private UdpEchoServer(DatagramSocket socket) {
        this.socket = socket;
        Thread t = new Thread(this::serve, "udp-echo-" + socket.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    public static UdpEchoServer start(InNamespace in, int port) throws Exception {
        return new UdpEchoServer(
                in.call(() -> new DatagramSocket(new InetSocketAddress(InetAddress.getByName("::"), port))));
    }

    private void serve() {
        byte[] buf = new byte[1500];
        while (!socket.isClosed()) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                socket.receive(p);
                socket.send(new DatagramPacket(p.getData(), p.getLength(), p.getSocketAddress()));
            } catch (IOException e) {
                return;
            }
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
