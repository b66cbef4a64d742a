// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * What the control plane hands the console: its inspection service and the gRPC listener's
 * interceptors (call limits, then authentication), and how callers authenticate.
 *
 * @param tokens {@code --auth token}: bearer tokens are reviewed
 * @param certificates {@code --auth mtls}: a browser has no node certificate, so no console
 */
public record ConsoleBackend(
        BindableService inspection, List<ServerInterceptor> interceptors, boolean tokens, boolean certificates) {

    /** The limits run first, as on the listener (whose interceptor list runs the last first). */
    public static ConsoleBackend of(
            BindableService inspection,
            ServerInterceptor limits,
            List<ServerInterceptor> authentication,
            boolean tokens,
            boolean certificates) {
        List<ServerInterceptor> all = new ArrayList<>(List.of(limits));
        all.addAll(authentication);
        return new ConsoleBackend(inspection, List.copyOf(all), tokens, certificates);
    }

    /** Starts the in-process inspection and the page on {@code bind}; closing it stops both. */
    public Running start(InetSocketAddress bind) throws IOException {
        if (certificates) {
            throw new IllegalArgumentException(
                    "the console cannot check client certificates: use --auth token (or none) with --console-listen");
        }
        LocalInspection local = LocalInspection.start(inspection, interceptors);
        try {
            return new Running(local, ConsoleServer.start(bind, local, tokens));
        } catch (IOException | RuntimeException e) {
            try {
                local.close();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            throw e;
        }
    }

    /** A serving console. */
    public record Running(LocalInspection inspection, ConsoleServer server) implements AutoCloseable {
        public int port() {
            return server.port();
        }

        @Override
        public void close() throws InterruptedException {
            server.close();
            inspection.close();
        }
    }
}
