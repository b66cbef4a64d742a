// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Applies the ToAgent stream to a mutable copy of a node's state and renders it as a
 * NodeSnapshot at any time. Pure state (no I/O, not thread-safe): the agent's sync thread owns
 * one, applies messages as they arrive and compiles {@link #snapshot()} when it wants to swap.
 * InSync carries no state and is left to the caller (it is still sequence-checked here).
 *
 * <p>The snapshot is deterministic: IP sets by id with members sorted, policies by (tier, name),
 * endpoints by (namespace, pod), the last NodeUpdate's pod ranges sorted (canonical, malformed
 * ones left out: {@link #podCidrProblems()}), so two assemblers that saw the same effect produce
 * equal messages, and so do two that saw the same content in another order: a resumed stream
 * (a match of {@link io.kubeverdict.policy.SnapshotDigest}, which ignores order) holds exactly
 * what a full resync would.
 */
public final class SnapshotAssembler {

    private static final Comparator<PolicyId> POLICY_ORDER =
            Comparator.comparing(PolicyId::getTier).thenComparing(PolicyId::getName);
    private static final Comparator<EndpointId> ENDPOINT_ORDER =
            Comparator.comparing(EndpointId::getNamespace).thenComparing(EndpointId::getPod);

    // The type as its wire number: one this build does not know (a newer control plane's) is kept
    // as sent, and the compile leaves the set out: a rule naming it has an unusable part, which
    // matches nothing in an Allow and makes a Deny or Pass deny all. The rendered message is
    // kept until the set changes: snapshot() then costs the changed sets only, and an unchanged set
    // is the same instance in consecutive snapshots, which is how the index update and the
    // re-judging tell in one comparison that it did not change.
    private static final class SetState {
        final int type;
        final TreeSet<String> members;
        IpSet rendered;

        SetState(int type, TreeSet<String> members) {
            this.type = type;
            this.members = members;
        }

        IpSet render(String id) {
            if (rendered == null) {
                rendered = IpSet.newBuilder()
                        .setId(id)
                        .setTypeValue(type)
                        .addAllMembers(members)
                        .build();
            }
            return rendered;
        }
    }

    private final String node;
    private final Map<String, SetState> ipSets = new TreeMap<>();
    private final Map<PolicyId, ActivePolicy> policies = new TreeMap<>(POLICY_ORDER);
    private final Map<EndpointId, Endpoint> endpoints = new TreeMap<>(ENDPOINT_ORDER);
    /** The node's pod ranges (the last NodeUpdate's usable ones, canonical), and what it could not use. */
    private List<String> podCidrs = List.of();

    private List<String> podCidrProblems = List.of();
    private long lastSequence = -1; // none seen since creation or reset
    // Whether a message was applied since creation or reset: the sequence is a uint64, so no value
    // of lastSequence can stand for "none" (one at or above 2^63 once turned the gap check off).
    private boolean started;

    public SnapshotAssembler(String node) {
        this.node = node;
    }

    /** Forgets everything, including the sequence: the next message starts a new stream. */
    public void reset() {
        ipSets.clear();
        policies.clear();
        endpoints.clear();
        podCidrs = List.of();
        podCidrProblems = List.of();
        lastSequence = -1;
        started = false;
    }

    /**
     * Starts from a snapshot an assembler rendered (the enforced state that a resumed stream
     * continues from) instead of nothing, forgetting the sequence as {@link #reset()} does. Its
     * parts are kept as they are, so the next {@link #snapshot()} shares the unchanged ones.
     */
    public void seed(NodeSnapshot snapshot) {
        reset();
        for (IpSet set : snapshot.getIpSetsList()) {
            SetState state = new SetState(set.getTypeValue(), new TreeSet<>(set.getMembersList()));
            if (set.getMembersList().equals(List.copyOf(state.members))) {
                state.rendered = set; // sorted, no duplicates: what render() would build
            }
            ipSets.put(set.getId(), state);
        }
        snapshot.getPoliciesList().forEach(p -> policies.put(p.getId(), p));
        snapshot.getEndpointsList().forEach(e -> endpoints.put(e.getId(), e));
        podCidrs = List.copyOf(snapshot.getPodCidrsList());
    }

    /**
     * What an assembler holds after a stream that carries {@code snapshot} in full (a full resync
     * to it): the snapshot as this agent renders it. A snapshot equal to its rendering is one this
     * agent's assembler made; a snapshot kept by another agent release (which may have rendered
     * otherwise) or edited is not, and must not be resumed from: its digest may match the control
     * plane's while a resync would enforce something else.
     */
    public static NodeSnapshot rendering(NodeSnapshot snapshot) {
        SnapshotAssembler assembler = new SnapshotAssembler(snapshot.getNode());
        List<ToAgent.Builder> stream = new ArrayList<>();
        for (IpSet set : snapshot.getIpSetsList()) {
            stream.add(ToAgent.newBuilder()
                    .setIpSetUpdate(IpSetUpdate.newBuilder()
                            .setId(set.getId())
                            .setTypeValue(set.getTypeValue())
                            .addAllMembers(set.getMembersList())));
        }
        for (ActivePolicy policy : snapshot.getPoliciesList()) {
            stream.add(ToAgent.newBuilder()
                    .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                            .setId(policy.getId())
                            .setPolicy(policy.getPolicy())));
        }
        for (Endpoint endpoint : snapshot.getEndpointsList()) {
            stream.add(ToAgent.newBuilder()
                    .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                            .setId(endpoint.getId())
                            .setEndpoint(endpoint.getEndpoint())));
        }
        stream.add(
                ToAgent.newBuilder().setNodeUpdate(NodeUpdate.newBuilder().addAllPodCidrs(snapshot.getPodCidrsList())));
        try {
            for (int i = 0; i < stream.size(); i++) {
                assembler.apply(stream.get(i).setSequence(i + 1).build());
            }
        } catch (ResyncRequiredException e) {
            throw new IllegalStateException("a snapshot's own parts always apply", e);
        }
        return assembler.snapshot();
    }

    /**
     * Why {@code snapshot} is not exactly what this agent's assembler renders (the kinds of part
     * that differ), or null when it is.
     */
    public static String differenceFromRendering(NodeSnapshot snapshot) {
        NodeSnapshot rendered = rendering(snapshot);
        if (rendered.equals(snapshot)) {
            return null;
        }
        List<String> differ = new ArrayList<>();
        if (!rendered.getIpSetsList().equals(snapshot.getIpSetsList())) {
            differ.add("IP sets");
        }
        if (!rendered.getPoliciesList().equals(snapshot.getPoliciesList())) {
            differ.add("policies");
        }
        if (!rendered.getEndpointsList().equals(snapshot.getEndpointsList())) {
            differ.add("endpoints");
        }
        if (!rendered.getPodCidrsList().equals(snapshot.getPodCidrsList())) {
            differ.add("pod ranges");
        }
        if (differ.isEmpty()) {
            differ.add("fields this agent does not know");
        }
        return "its " + String.join(", ", differ) + " differ from how this agent renders them";
    }

    /** The sequence of the last applied message, or -1 when none since creation or reset. */
    public long lastSequence() {
        return lastSequence;
    }

    /**
     * Applies one message. The first message after creation or {@link #reset()} may carry any
     * sequence; each later one must carry the previous plus one. On an exception nothing of the
     * message was applied and the state should be discarded by a resync.
     *
     * @return the payload case applied, so the caller can react to IN_SYNC
     */
    public ToAgent.PayloadCase apply(ToAgent message) throws ResyncRequiredException {
        if (started && message.getSequence() != lastSequence + 1) {
            throw new SequenceGapException(lastSequence + 1, message.getSequence());
        }
        switch (message.getPayloadCase()) {
            case IP_SET_UPDATE -> {
                IpSetUpdate u = message.getIpSetUpdate();
                ipSets.put(u.getId(), new SetState(u.getTypeValue(), new TreeSet<>(u.getMembersList())));
            }
            case IP_SET_DELTA_UPDATE -> {
                IpSetDeltaUpdate d = message.getIpSetDeltaUpdate();
                SetState set = ipSets.get(d.getId());
                if (set == null) {
                    throw new ResyncRequiredException(
                            "delta for unknown ip set " + d.getId() + " at sequence " + message.getSequence());
                }
                // Removals first: a member both removed and added in one delta stays.
                boolean changed = set.members.removeAll(d.getRemovedMembersList());
                changed |= set.members.addAll(d.getAddedMembersList());
                if (changed) {
                    set.rendered = null;
                }
            }
            case IP_SET_REMOVE -> ipSets.remove(message.getIpSetRemove().getId());
            case ACTIVE_POLICY_UPDATE ->
                policies.put(
                        message.getActivePolicyUpdate().getId(),
                        ActivePolicy.newBuilder()
                                .setId(message.getActivePolicyUpdate().getId())
                                .setPolicy(message.getActivePolicyUpdate().getPolicy())
                                .build());
            case ACTIVE_POLICY_REMOVE ->
                policies.remove(message.getActivePolicyRemove().getId());
            case WORKLOAD_ENDPOINT_UPDATE ->
                endpoints.put(
                        message.getWorkloadEndpointUpdate().getId(),
                        Endpoint.newBuilder()
                                .setId(message.getWorkloadEndpointUpdate().getId())
                                .setEndpoint(withIpv4MappedAsIpv4(
                                        message.getWorkloadEndpointUpdate().getEndpoint()))
                                .build());
            case WORKLOAD_ENDPOINT_REMOVE ->
                endpoints.remove(message.getWorkloadEndpointRemove().getId());
            case NODE_UPDATE -> replacePodCidrs(message.getNodeUpdate().getPodCidrsList());
            case IN_SYNC -> {}
            default ->
                throw new ResyncRequiredException("message without a known payload at sequence " + message.getSequence()
                        + " (newer control plane?)");
        }
        lastSequence = message.getSequence();
        started = true;
        return message.getPayloadCase();
    }

    /**
     * The endpoint with each IPv4-mapped IPv6 address ("::ffff:10.0.0.5") written as the IPv4
     * address, duplicates removed, other text untouched. The kernel's IPv4 hooks see such a pod's
     * packets as IPv4 and the selected-address sets put it there; the index must key it the same
     * way, or its IPv4 packets are queued and then find no endpoint (allowed). Security audit L6.
     */
    static WorkloadEndpoint withIpv4MappedAsIpv4(WorkloadEndpoint endpoint) {
        boolean mapped = false;
        for (String text : endpoint.getIpsList()) {
            mapped |= ipv4Mapped(text) != null;
        }
        if (!mapped) {
            return endpoint;
        }
        Set<String> ips = new LinkedHashSet<>();
        for (String text : endpoint.getIpsList()) {
            String v4 = ipv4Mapped(text);
            ips.add(v4 != null ? v4 : text);
        }
        return endpoint.toBuilder().clearIps().addAllIps(ips).build();
    }

    /** The IPv4 text of an IPv4-mapped IPv6 literal; null for anything else. */
    private static String ipv4Mapped(String text) {
        IpAddress ip = IpAddress.tryParse(text == null ? null : text.strip());
        if (ip == null || ip.family() != IpAddress.V6 || ip.hi() != 0 || (ip.lo() >>> 32) != 0xFFFFL) {
            return null;
        }
        return IpAddress.v4((int) ip.lo()).toString();
    }

    /**
     * Like a set member the agent cannot use, a malformed range is left out and reported rather
     * than refused: a resync would bring the same message back, and the ranges only ever make the
     * agent hold more (the pod address guard), never allow more.
     */
    private void replacePodCidrs(List<String> sent) {
        Set<String> usable = new TreeSet<>(); // sorted as the digest sorts them
        List<String> problems = new ArrayList<>();
        for (String text : sent) {
            Cidr cidr = Cidr.tryParse(text);
            if (cidr == null) {
                problems.add("invalid pod CIDR \"" + text + "\" ignored");
            } else {
                usable.add(cidr.toString());
            }
        }
        podCidrs = List.copyOf(usable);
        podCidrProblems = List.copyOf(problems);
    }

    /** What the last NodeUpdate carried that could not be used (malformed pod ranges), to report. */
    public List<String> podCidrProblems() {
        return podCidrProblems;
    }

    public int ipSetCount() {
        return ipSets.size();
    }

    public int policyCount() {
        return policies.size();
    }

    public int endpointCount() {
        return endpoints.size();
    }

    /**
     * The current state as a self-describing, deterministically ordered snapshot. Parts that did not
     * change since the last call are the same message instances as in its result.
     */
    public NodeSnapshot snapshot() {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode(node);
        ipSets.forEach((id, set) -> b.addIpSets(set.render(id)));
        b.addAllPolicies(policies.values());
        b.addAllEndpoints(endpoints.values());
        b.addAllPodCidrs(podCidrs);
        return b.build();
    }
}
