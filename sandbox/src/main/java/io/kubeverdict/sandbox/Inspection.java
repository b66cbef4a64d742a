// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListCachedFlowsRequest;
import io.kubeverdict.proto.v1.ListCachedFlowsResponse;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * gRPC clients of the inspection services of the sandbox's processes. They listen inside the
 * testbed (on the fabric), not in the root namespace, so every client socket is opened by a
 * thread inside the fabric namespace (a channel factory that hops there), whatever thread gRPC
 * happens to connect from.
 */
final class Inspection implements AutoCloseable {
    interface InNamespace {
        <T> T call(Callable<T> work) throws Exception;
    }

    static {
        // Netty derives a machine id from a MAC address; the fabric has none worth a warning.
        System.setProperty("io.grpc.netty.shaded.io.netty.machineId", "02:00:00:00:00:01");
    }

    private final NioEventLoopGroup loop = new NioEventLoopGroup(1);
    private final InNamespace fabric;
    private final ManagedChannel controlPlane;
    private final Map<String, ManagedChannel> agents = new LinkedHashMap<>();

    Inspection(InNamespace fabric, String controlPlaneAddress, Map<String, String> agentAddresses) {
        this.fabric = fabric;
        this.controlPlane = channel(controlPlaneAddress);
        agentAddresses.forEach((node, address) -> agents.put(node, channel(address)));
    }

    private ManagedChannel channel(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return NettyChannelBuilder.forAddress(
                        hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)))
                .usePlaintext()
                .eventLoopGroup(loop)
                .channelFactory(() -> {
                    try {
                        return fabric.call(NioSocketChannel::new);
                    } catch (Exception e) {
                        throw new IllegalStateException("cannot open a socket in the fabric namespace", e);
                    }
                })
                .build();
    }

    List<NodeStatus> nodes() {
        return listNodes().getNodesList();
    }

    ListNodesResponse listNodes() {
        return ControlPlaneInspectionGrpc.newBlockingStub(controlPlane)
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .listNodes(ListNodesRequest.getDefaultInstance());
    }

    /** The control plane's whole flow history. */
    ListFlowsResponse flows() {
        return ControlPlaneInspectionGrpc.newBlockingStub(controlPlane)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .listFlows(ListFlowsRequest.newBuilder().setLimit(100_000).build());
    }

    /** The node's agent's verdict cache keys with their counts (ListCachedFlows). */
    public ListCachedFlowsResponse cachedFlows(String node) {
        return AgentInspectionGrpc.newBlockingStub(agents.get(node))
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .listCachedFlows(ListCachedFlowsRequest.getDefaultInstance());
    }

    AgentStatus agent(String node) {
        return AgentInspectionGrpc.newBlockingStub(agents.get(node))
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .getStatus(AgentStatusRequest.getDefaultInstance());
    }

    /**
     * Makes every channel dial at once on its next call: after a process was killed and started
     * again, gRPC's own connect backoff (growing to two minutes) would otherwise delay noticing it.
     */
    void resetConnectBackoff() {
        controlPlane.resetConnectBackoff();
        agents.values().forEach(ManagedChannel::resetConnectBackoff);
    }

    @Override
    public void close() {
        controlPlane.shutdownNow();
        agents.values().forEach(ManagedChannel::shutdownNow);
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
