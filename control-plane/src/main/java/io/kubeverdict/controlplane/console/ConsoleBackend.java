// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the control plane hands the console: its inspection service and the gRPC listener's
 * interceptors (call limits, then authentication). The listener authenticates with interceptors
 * only for bearer tokens ({@code --auth token}); without any, the console lets in loopback only.
 * With {@code --auth mtls} a browser has no certificate: {@code control-plane} refuses the console
 * there, and a console started anyway reads nothing (the in-process call names no node).
 *
 * @param tokens bearer tokens are reviewed
 */
public record ConsoleBackend(BindableService inspection, List<ServerInterceptor> interceptors, boolean tokens) {
    private static final Logger log = LoggerFactory.getLogger(ConsoleBackend.class);

    /** The limits run first, as on the listener (whose interceptor list runs the last first). */
    public static ConsoleBackend of(
            BindableService inspection, ServerInterceptor limits, List<ServerInterceptor> authentication) {
        List<ServerInterceptor> all = new ArrayList<>(List.of(limits));
        all.addAll(authentication);
        return new ConsoleBackend(inspection, List.copyOf(all), !authentication.isEmpty());
    }

    /** Starts the in-process inspection and the page on {@code bind}; closing it stops both. */
    public Running start(InetSocketAddress bind) throws IOException {
        LocalInspection local = LocalInspection.start(inspection, interceptors);
        try {
            Running running = new Running(local, ConsoleServer.start(bind, local, tokens));
            log.info(
                    "console on http://{}:{}/ ({})",
                    bind.getHostString(),
                    running.port(),
                    tokens ? "bearer tokens allowed to inspect, or loopback" : "loopback only");
            return running;
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
