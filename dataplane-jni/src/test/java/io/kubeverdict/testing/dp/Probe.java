// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.testing.TestNamespace;
import java.io.IOException;
import java.io.InputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * Tries real connections from inside a namespace. A denied first packet is dropped, so the
 * observable result of "denied" is a timeout; timeouts are short (a retried SYN is simply judged again).
 */
public final class Probe {
    public static final int TIMEOUT_MILLIS = 1200;

    private Probe() {}

    /** Connects, sends a line, expects it back. */
    public static boolean tcp(TestNamespace from, String ip, int port) throws Exception {
        return Netns.call(from.path(), () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getByName(ip), port), TIMEOUT_MILLIS);
                s.setSoTimeout(TIMEOUT_MILLIS);
                return roundTrip(s, "hello");
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return false; // refused or unreachable: not through
            }
        });
    }

    /** Sends one datagram and waits for the echo. */
    public static boolean udp(TestNamespace from, String ip, int port) throws Exception {
        return Netns.call(from.path(), () -> {
            try (DatagramSocket s = new DatagramSocket()) {
                s.setSoTimeout(TIMEOUT_MILLIS);
                byte[] data = "ping".getBytes(StandardCharsets.US_ASCII);
                s.send(new DatagramPacket(data, data.length, InetAddress.getByName(ip), port));
                DatagramPacket reply = new DatagramPacket(new byte[64], 64);
                s.receive(reply);
                return reply.getLength() == data.length;
            } catch (SocketTimeoutException e) {
                return false;
            }
        });
    }

    /** Writes a line and reads the same bytes back. */
    public static boolean roundTrip(Socket s, String text) throws IOException {
        byte[] data = text.getBytes(StandardCharsets.US_ASCII);
        s.getOutputStream().write(data);
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        int got = 0;
        byte[] buf = new byte[data.length];
        while (got < data.length) {
            int n = in.read(buf, got, data.length - got);
            if (n < 0) {
                return false;
            }
            got += n;
        }
        return new String(buf, StandardCharsets.US_ASCII).equals(text);
    }

    /** A connected socket, made inside the namespace (then usable from any thread). */
    public static Socket connect(TestNamespace from, String ip, int port) throws Exception {
        return Netns.call(from.path(), () -> {
            Socket s = new Socket();
            s.connect(new InetSocketAddress(InetAddress.getByName(ip), port), TIMEOUT_MILLIS);
            s.setSoTimeout(TIMEOUT_MILLIS);
            return s;
        });
    }
}
