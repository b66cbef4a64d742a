// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The control plane's own inspection service on an in-process gRPC server, for the console: the
 * same service object behind the same interceptors as the network listener (call limits, bearer
 * token review, SubjectAccessReview for {@code /kube-verdict/inspect}), so the console reads what
 * a CLI client would and is refused what it would be. Nothing here reaches the network.
 */
public final class LocalInspection implements AutoCloseable {
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final Server server;
    private final ManagedChannel channel;

    private LocalInspection(Server server, ManagedChannel channel) {
        this.server = server;
        this.channel = channel;
    }

    /**
     * @param interceptors the network listener's, in its order (the last runs first); the
     *     browser's address is put in before any of them
     */
    public static LocalInspection start(BindableService inspection, List<ServerInterceptor> interceptors)
            throws IOException {
        String name = "kube-verdict-console-" + UUID.randomUUID();
        List<ServerInterceptor> all = new ArrayList<>(interceptors);
        all.add(new ConsolePeerInterceptor());
        Server server = InProcessServerBuilder.forName(name)
                .addService(ServerInterceptors.intercept(inspection, all))
                .build()
                .start();
        return new LocalInspection(server, InProcessChannelBuilder.forName(name).build());
    }

    public ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub blocking(Viewer viewer) {
        return as(ControlPlaneInspectionGrpc.newBlockingStub(channel), viewer);
    }

    public ControlPlaneInspectionGrpc.ControlPlaneInspectionStub async(Viewer viewer) {
        return as(ControlPlaneInspectionGrpc.newStub(channel), viewer);
    }

    private static <S extends AbstractStub<S>> S as(S stub, Viewer viewer) {
        Metadata headers = new Metadata();
        headers.put(ConsolePeerInterceptor.PEER, ConsolePeerInterceptor.format(viewer.peer()));
        if (viewer.authorization() != null) {
            headers.put(AUTHORIZATION, viewer.authorization());
        }
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
