// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.nft.CachedFlows;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.proto.v1.CachedFlow;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.LearnedDomains;
import io.kubeverdict.proto.v1.ListCachedFlowsRequest;
import io.kubeverdict.proto.v1.ListCachedFlowsResponse;
import io.kubeverdict.proto.v1.ListEndpointsRequest;
import io.kubeverdict.proto.v1.ListEndpointsResponse;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.WatchVerdictsRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/** AgentInspection: what this agent enforces and why, answered from the current generation. */
public final class AgentInspectionService extends AgentInspectionGrpc.AgentInspectionImplBase {
    private final AgentIdentity identity;
    private final StateHolder state;
    private final SyncStatus sync;
    private final Supplier<Optional<QueueCounters>> queue;
    private final VerdictFeed feed;
    private final Supplier<Optional<List<CachedFlows.Flow>>> cachedFlows;

    public AgentInspectionService(
            AgentIdentity identity,
            StateHolder state,
            SyncStatus sync,
            Supplier<Optional<QueueCounters>> queue,
            VerdictFeed feed) {
        this(identity, state, sync, queue, feed, Optional::empty);
    }

    /** @param cachedFlows the verdict cache's counted keys (empty: it keeps no counts) */
    public AgentInspectionService(
            AgentIdentity identity,
            StateHolder state,
            SyncStatus sync,
            Supplier<Optional<QueueCounters>> queue,
            VerdictFeed feed,
            Supplier<Optional<List<CachedFlows.Flow>>> cachedFlows) {
        this.identity = identity;
        this.state = state;
        this.sync = sync;
        this.queue = queue;
        this.feed = feed;
        this.cachedFlows = cachedFlows;
    }

    @Override
    public void getStatus(AgentStatusRequest request, StreamObserver<AgentStatus> response) {
        StateHolder.Generation generation = state.generation();
        Optional<QueueCounters> counters = queue.get();
        AgentStatus.Builder status = AgentStatus.newBuilder()
                .setNode(identity.node())
                .setInSync(sync.inSync())
                .setAppliedSequence(sync.appliedSequence())
                .setKernelPath(identity.kernelPath())
                .setQueueId(identity.queueId())
                .setFailOpen(identity.failOpen())
                // queue_total is the kernel's name for the packets waiting on the queue now.
                .setQueueTotal(counters.map(QueueCounters::waiting).orElse(0L))
                .setQueueDropped(counters.map(QueueCounters::dropped).orElse(0L))
                .setQueueUserDropped(counters.map(QueueCounters::userDropped).orElse(0L));
        if (generation != null) {
            EnforcedState current = generation.state();
            status.setEndpoints(current.snapshot().getEndpointsCount())
                    .setPolicies(current.snapshot().getPoliciesCount())
                    .setIpSets(current.snapshot().getIpSetsCount());
            long learned = 0;
            int sets = 0;
            for (LearnedDomains d : LearnedDomainsReport.of(generation.learned())) {
                learned += d.getAddressesCount();
                sets++;
            }
            status.setLearnedAddresses(learned).setLearnedSets(sets);
        }
        response.onNext(status.build());
        response.onCompleted();
    }

    @Override
    public void listEndpoints(ListEndpointsRequest request, StreamObserver<ListEndpointsResponse> response) {
        StateHolder.Generation generation = state.generation();
        ListEndpointsResponse.Builder out = ListEndpointsResponse.newBuilder();
        if (generation != null) {
            out.addAllEndpoints(generation.state().snapshot().getEndpointsList())
                    .addAllLearned(LearnedDomainsReport.of(generation.learned()));
        }
        response.onNext(out.build());
        response.onCompleted();
    }

    @Override
    public void explain(ExplainRequest request, StreamObserver<Explanation> response) {
        StateHolder.Generation generation = state.generation();
        if (generation == null) {
            response.onError(Status.FAILED_PRECONDITION
                    .withDescription("no policy state applied yet (not in sync)")
                    .asRuntimeException());
            return;
        }
        EnforcedState current = generation.state();
        Tuple.Builder tuple = request.getTuple().toBuilder();
        try {
            tuple.setSrcIp(address(current, tuple.getSrcIp(), request.getFrom(), "source"));
            tuple.setDstIp(address(current, tuple.getDstIp(), request.getTo(), "destination"));
        } catch (IllegalArgumentException e) {
            response.onError(
                    Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        // with what the pods learned from DNS, as the verdict loop decides
        response.onNext(new Explainer(current.index(), generation.learned()).explain(tuple.build()));
        response.onCompleted();
    }

    @Override
    public void listCachedFlows(ListCachedFlowsRequest request, StreamObserver<ListCachedFlowsResponse> response) {
        StateHolder.Generation before = state.generation();
        Optional<List<CachedFlows.Flow>> read;
        try {
            read = cachedFlows.get();
        } catch (RuntimeException e) {
            response.onError(Status.UNAVAILABLE
                    .withDescription("reading the verdict cache failed: " + e.getMessage())
                    .asRuntimeException());
            return;
        }
        ListCachedFlowsResponse.Builder out =
                ListCachedFlowsResponse.newBuilder().setCounted(read.isPresent());
        List<CachedFlows.Flow> flows = new ArrayList<>(read.orElse(List.of()));
        flows.sort(Comparator.comparingLong(CachedFlows.Flow::connections).reversed());
        out.setKeys(flows.size());
        // Explained with the state the keys were cached under; a change during the read emptied the
        // cache, so the listing may mix states: then no explanation.
        StateHolder.Generation generation = state.generation() == before ? before : null;
        Explainer explainer =
                generation == null ? null : new Explainer(generation.state().index(), generation.learned());
        int limit = request.getLimit() == 0 ? DEFAULT_CACHED_FLOWS : request.getLimit();
        for (CachedFlows.Flow f : flows.subList(0, Math.min(limit, flows.size()))) {
            Tuple tuple = new PacketTuple()
                    .set(f.source(), f.destination(), f.protocol(), f.port())
                    .toTuple();
            CachedFlow.Builder flow = CachedFlow.newBuilder().setTuple(tuple).setConnections(f.connections());
            if (explainer != null) {
                flow.setExplanation(explainer.explain(tuple).toBuilder().setCached(true));
            }
            out.addFlows(flow);
        }
        response.onNext(out.build());
        response.onCompleted();
    }

    /** ListCachedFlows' limit when the request gives none. */
    static final int DEFAULT_CACHED_FLOWS = 1000;

    /** An address given directly, or the first address of a local pod named "namespace/name". */
    private static String address(EnforcedState current, String ip, String pod, String role) {
        if (!ip.isEmpty()) {
            if (IpAddress.tryParse(ip) == null) {
                throw new IllegalArgumentException(role + " " + ip + " is not an IP address");
            }
            return ip;
        }
        if (pod.isEmpty()) {
            throw new IllegalArgumentException("give a " + role + " address (or a local pod namespace/name)");
        }
        for (Endpoint e : current.snapshot().getEndpointsList()) {
            if ((e.getId().getNamespace() + "/" + e.getId().getPod()).equals(pod)
                    && e.getEndpoint().getIpsCount() > 0) {
                return e.getEndpoint().getIps(0);
            }
        }
        throw new IllegalArgumentException(role + " pod " + pod + " is not an endpoint on this node; give its address");
    }

    @Override
    public void watchVerdicts(WatchVerdictsRequest request, StreamObserver<Explanation> response) {
        if (!request.getIp().isEmpty() && IpAddress.tryParse(request.getIp()) == null) {
            response.onError(Status.INVALID_ARGUMENT
                    .withDescription(request.getIp() + " is not an IP address")
                    .asRuntimeException());
            return;
        }
        feed.watch(request, (ServerCallStreamObserver<Explanation>) response);
    }
}
