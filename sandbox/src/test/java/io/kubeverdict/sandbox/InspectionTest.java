// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.Testbed;
import io.kubeverdict.testing.tier.KernelTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

/**
 * The inspection clients reach a gRPC server that listens only inside the testbed's fabric
 * namespace, whichever thread gRPC connects from.
 */
@KernelTest
class InspectionTest {
    @Test
    void reachesAServiceListeningInsideTheFabricNamespace() throws Exception {
        try (Testbed bed = Testbed.create(
                "kvt-sb-",
                List.of("n1"),
                List.of(new PodSpec("x/a", "n1", List.of(InetAddress.getByName("10.82.0.1")), List.of())))) {
            String fabric = bed.layout().fabricNamespace();
            Inspection.InNamespace inFabric = new Inspection.InNamespace() {
                @Override
                public <T> T call(Callable<T> work) throws Exception {
                    return bed.callIn(fabric, work);
                }
            };
            NioEventLoopGroup group = new NioEventLoopGroup(1);
            Server server = NettyServerBuilder.forAddress(
                            new InetSocketAddress(bed.layout().fabricAddress(), 19102))
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .channelFactory(() -> {
                        try {
                            return inFabric.call(NioServerSocketChannel::new);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .addService(new AgentInspectionGrpc.AgentInspectionImplBase() {
                        @Override
                        public void getStatus(AgentStatusRequest request, StreamObserver<AgentStatus> response) {
                            response.onNext(AgentStatus.newBuilder()
                                    .setNode("n1")
                                    .setInSync(true)
                                    .build());
                            response.onCompleted();
                        }
                    })
                    .build()
                    .start();
            try (Inspection inspection = new Inspection(
                    inFabric,
                    bed.layout().fabricAddress() + ":19103",
                    Map.of("n1", bed.layout().fabricAddress() + ":19102"))) {
                AgentStatus status = inspection.agent("n1");
                assertThat(status.getNode()).isEqualTo("n1");
                assertThat(status.getInSync()).isTrue();
            } finally {
                server.shutdownNow().awaitTermination();
                group.shutdownGracefully().sync();
            }
        }
    }
}
