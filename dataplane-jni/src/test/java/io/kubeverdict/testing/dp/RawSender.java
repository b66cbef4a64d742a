// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import io.kubeverdict.testing.TestNamespace;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * Sends crafted packets from a namespace through a tiny C helper (kvt_rawsend.c, compiled once
 * per JVM with gcc, which the native build needs anyway): Java has no raw sockets.
 */
public final class RawSender {
    private static Path binary;

    private RawSender() {}

    public static synchronized Path binary() throws IOException, InterruptedException {
        if (binary == null) {
            Path dir = Files.createTempDirectory("kvt-rawsend");
            Path source = dir.resolve("kvt_rawsend.c");
            try (InputStream in = RawSender.class.getResourceAsStream("kvt_rawsend.c")) {
                Files.copy(in, source);
            }
            Path out = dir.resolve("kvt_rawsend");
            Process gcc = new ProcessBuilder("gcc", "-O1", "-Wall", "-Werror", "-o", out.toString(), source.toString())
                    .redirectErrorStream(true)
                    .start();
            String log = new String(gcc.getInputStream().readAllBytes());
            if (gcc.waitFor() != 0) {
                throw new IOException("gcc failed: " + log);
            }
            out.toFile().deleteOnExit();
            source.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            binary = out;
        }
        return binary;
    }

    /** Sends packet (a whole IP packet) from the namespace to destination. */
    public static void send(TestNamespace from, int family, String destination, byte[] packet) throws Exception {
        from.exec(
                binary().toString(),
                String.valueOf(family),
                destination,
                HexFormat.of().formatHex(packet));
    }
}
