// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyRemove;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetRemove;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointRemove;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import io.kubeverdict.testing.tier.Tiers;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Any ToAgent sequence into the agent's {@link SnapshotAssembler}, one message at a time. Each
 * message is applied, or rejected with {@link ResyncRequiredException} (a {@link SequenceGapException}
 * for a wrong sequence), never anything else; exactly the messages the contract rejects are
 * rejected; a rejected message changes nothing (snapshot and sequence as before); an applied one
 * has exactly its own effect (checked against a map-based model); and what the agent would
 * enforce compiles: the snapshot after each InSync and the last one (compiling after every
 * message would make this target ten times slower; SnapshotIndexFuzzTest covers compile itself).
 *
 * <p>Input: the last byte picks the decoding. 0: the rest is a stream of length-delimited ToAgent
 * messages, fed as they are (regression inputs are real streams in this form); 1: the same, but
 * renumbered to consecutive sequences so mutated payloads get applied; otherwise messages are
 * built from the bytes out of a small vocabulary of ids and members, so updates, deltas and
 * removals hit the same entries. Regression inputs: SnapshotAssemblerFuzzTestInputs/anyToAgentSequence.
 */
@Tag(Tiers.FUZZ)
class SnapshotAssemblerFuzzTest {
    private static final String NODE = "node-1";
    private static final int MAX_MESSAGES = 64;
    private static final String[] SET_IDS = {"s0", "s1", "s2", ""};
    private static final String[] MEMBERS = {
        "10.0.0.1", "10.0.0.2", "fd00::1", "10.0.0.1,tcp:80", "fd00::2,udp:53", "10.0.0.300", "", "x"
    };
    private static final String[] CIDRS = {"10.0.0.0/8", "0.0.0.0/0", "fd00::/64", "10.0.0.1/33", "::/0", "junk"};
    private static final String[] TIERS = {"default", "admin", ""};
    private static final String[] NAMES = {"ns/a", "ns/b", ""};

    @FuzzTest
    void anyToAgentSequence(FuzzedDataProvider data) {
        SnapshotAssembler assembler = new SnapshotAssembler(NODE);
        Model model = new Model();
        int decoding = data.consumeInt(0, 3);
        if (decoding <= 1) {
            List<ToAgent> stream = delimited(data.consumeRemainingAsBytes());
            for (ToAgent message : stream) {
                if (decoding == 1 && model.started) {
                    message = message.toBuilder().setSequence(model.last + 1).build();
                }
                feed(assembler, model, message);
            }
        } else {
            for (int i = 0; i < MAX_MESSAGES && data.remainingBytes() > 0; i++) {
                if (!feed(assembler, model, message(data, model)) && data.consumeBoolean()) {
                    assembler.reset(); // as the agent does: a new stream on a fresh state
                    model.reset();
                }
            }
        }
        SnapshotIndex.compile(assembler.snapshot()); // must not throw, whatever the content
    }

    // ------------------------------------------------------------------ what fuzzing found

    /**
     * An IpSetUpdate with a type this build does not know was applied, then every snapshot() threw
     * (IpSet.Builder.setType(UNRECOGNIZED)): the agent resynced forever and took no later update.
     */
    @Test
    void aSetOfAnUnknownTypeRendersAndMatchesNothing() throws Exception {
        SnapshotAssembler assembler = new SnapshotAssembler(NODE);
        assembler.apply(ToAgent.newBuilder()
                .setSequence(1)
                .setIpSetUpdate(
                        IpSetUpdate.newBuilder().setId("s0").setTypeValue(7).addMembers("10.0.0.1"))
                .build());

        NodeSnapshot snapshot = assembler.snapshot();
        assertThat(snapshot.getIpSets(0).getTypeValue()).isEqualTo(7);
        assertThat(SnapshotIndex.compile(snapshot).problems()).anyMatch(p -> p.contains("unknown type"));
    }

    /** A first sequence at or above 2^63 (negative as a long) turned the gap check off for the stream. */
    @Test
    void aSequenceAbove2To63StillDetectsAGap() throws Exception {
        SnapshotAssembler assembler = new SnapshotAssembler(NODE);
        long big = Long.parseUnsignedLong("10851025925711500950");
        assembler.apply(ToAgent.newBuilder()
                .setSequence(big)
                .setInSync(InSync.getDefaultInstance())
                .build());
        assembler.apply(ToAgent.newBuilder()
                .setSequence(big + 1)
                .setInSync(InSync.getDefaultInstance())
                .build());

        ToAgent late = ToAgent.newBuilder()
                .setSequence(big + 3)
                .setInSync(InSync.getDefaultInstance())
                .build();
        assertThatThrownBy(() -> assembler.apply(late)).isInstanceOf(SequenceGapException.class);
        assertThat(assembler.lastSequence()).isEqualTo(big + 1);
    }

    /** Applies one message and checks all of the above; returns whether it was applied. */
    private static boolean feed(SnapshotAssembler assembler, Model model, ToAgent message) {
        NodeSnapshot before = assembler.snapshot();
        long sequenceBefore = assembler.lastSequence();
        String rejection = model.rejection(message);
        try {
            ToAgent.PayloadCase applied = assembler.apply(message);
            assertThat(rejection)
                    .as("applied although %s: %s", rejection, message)
                    .isNull();
            assertThat(applied).isEqualTo(message.getPayloadCase());
            assertThat(assembler.lastSequence()).isEqualTo(message.getSequence());
            model.apply(message);
        } catch (ResyncRequiredException e) {
            assertThat(rejection)
                    .as("rejected (%s) although the contract allows %s", e.getMessage(), message)
                    .isNotNull();
            if (rejection.equals(Model.GAP)) {
                assertThat(e).isInstanceOf(SequenceGapException.class);
            }
            assertThat(assembler.snapshot())
                    .as("a rejected message changed the state")
                    .isEqualTo(before);
            assertThat(assembler.lastSequence()).isEqualTo(sequenceBefore);
            return false;
        }
        NodeSnapshot after = assembler.snapshot();
        assertThat(after).isEqualTo(model.snapshot());
        if (message.hasInSync()) {
            SnapshotIndex.compile(after); // must not throw, whatever the content
        }
        return true;
    }

    private static List<ToAgent> delimited(byte[] bytes) {
        List<ToAgent> messages = new ArrayList<>();
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        try {
            while (messages.size() < MAX_MESSAGES) {
                ToAgent m = ToAgent.parseDelimitedFrom(in);
                if (m == null) {
                    break;
                }
                messages.add(m);
            }
        } catch (IOException e) {
            // InvalidProtocolBufferException: the stream ends at the first message that does not parse
        }
        return messages;
    }

    // ------------------------------------------------------------------ built messages

    private static ToAgent message(FuzzedDataProvider data, Model model) {
        ToAgent.Builder b = ToAgent.newBuilder().setSequence(sequence(data, model));
        if (data.consumeInt(0, 7) == 0) {
            b.setEventTimeUnixNanos(data.consumeLong());
        }
        switch (data.consumeInt(0, 10)) {
            case 0, 1 -> {
                IpSetUpdate.Builder u = IpSetUpdate.newBuilder().setId(setId(data));
                int type = data.consumeInt(0, 4);
                u.setTypeValue(type <= 2 ? type : data.consumeInt());
                for (int n = data.consumeInt(0, 4); n > 0; n--) {
                    u.addMembers(member(data));
                }
                b.setIpSetUpdate(u);
            }
            case 2 -> {
                IpSetDeltaUpdate.Builder d = IpSetDeltaUpdate.newBuilder().setId(setId(data));
                for (int n = data.consumeInt(0, 3); n > 0; n--) {
                    d.addAddedMembers(member(data));
                }
                for (int n = data.consumeInt(0, 3); n > 0; n--) {
                    d.addRemovedMembers(member(data));
                }
                b.setIpSetDeltaUpdate(d);
            }
            case 3 -> b.setIpSetRemove(IpSetRemove.newBuilder().setId(setId(data)));
            case 4 ->
                b.setActivePolicyUpdate(
                        ActivePolicyUpdate.newBuilder().setId(policyId(data)).setPolicy(policy(data)));
            case 5 -> b.setActivePolicyRemove(ActivePolicyRemove.newBuilder().setId(policyId(data)));
            case 6 ->
                b.setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(endpointId(data))
                        .setEndpoint(endpoint(data)));
            case 7 ->
                b.setWorkloadEndpointRemove(WorkloadEndpointRemove.newBuilder().setId(endpointId(data)));
            // Both forms of InSync (with and without change boundaries), picked from the sequence
            // rather than from a new byte, so the regression inputs decode as they did before.
            case 8 -> b.setInSync(InSync.newBuilder().setChangeBoundaries((b.getSequence() & 1) == 1));
            case 9 -> {
                NodeUpdate.Builder u = NodeUpdate.newBuilder();
                for (int n = data.consumeInt(0, 3); n > 0; n--) {
                    u.addPodCidrs(data.consumeInt(0, 7) == 0 ? data.consumeString(24) : data.pickValue(CIDRS));
                }
                b.setNodeUpdate(u);
            }
            default -> {} // no payload (or one from a newer control plane)
        }
        return b.build();
    }

    /** Mostly the next sequence; sometimes a repeat, a gap or anything. */
    private static long sequence(FuzzedDataProvider data, Model model) {
        long next = model.started ? model.last + 1 : data.consumeLong();
        return switch (data.consumeInt(0, 7)) {
            case 0 -> next - 1;
            case 1 -> next + 1;
            case 2 -> data.consumeLong();
            default -> next;
        };
    }

    private static String setId(FuzzedDataProvider data) {
        return data.consumeInt(0, 7) == 0 ? data.consumeString(8) : data.pickValue(SET_IDS);
    }

    private static String member(FuzzedDataProvider data) {
        return data.consumeInt(0, 7) == 0 ? data.consumeString(24) : data.pickValue(MEMBERS);
    }

    private static PolicyId policyId(FuzzedDataProvider data) {
        return PolicyId.newBuilder()
                .setTier(data.pickValue(TIERS))
                .setName(data.pickValue(NAMES))
                .build();
    }

    private static EndpointId endpointId(FuzzedDataProvider data) {
        return EndpointId.newBuilder()
                .setNamespace(data.pickValue(new String[] {"ns", "other"}))
                .setPod(data.pickValue(new String[] {"a", "b", "c"}))
                .build();
    }

    private static Policy policy(FuzzedDataProvider data) {
        if (data.consumeInt(0, 3) == 0) {
            try {
                return Policy.parseFrom(data.consumeBytes(data.consumeInt(0, 64)));
            } catch (InvalidProtocolBufferException e) {
                return Policy.getDefaultInstance();
            }
        }
        Policy.Builder p = Policy.newBuilder();
        for (int n = data.consumeInt(0, 3); n > 0; n--) {
            Rule.Builder r = Rule.newBuilder()
                    .setActionValue(data.consumeInt(0, 4))
                    .setAllPeers(data.consumeBoolean())
                    .setRuleId("r" + n);
            for (int k = data.consumeInt(0, 2); k > 0; k--) {
                r.addPeers(
                        data.consumeBoolean()
                                ? Peer.newBuilder().setIpSetId(setId(data))
                                : Peer.newBuilder()
                                        .setIpBlock(IpBlock.newBuilder().setCidr(data.pickValue(CIDRS))));
            }
            for (int k = data.consumeInt(0, 2); k > 0; k--) {
                r.addPorts(
                        data.consumeBoolean()
                                ? PortMatch.newBuilder().setNamedPortIpSetId(setId(data))
                                : PortMatch.newBuilder()
                                        .setProtocolValue(data.pickValue(new int[] {6, 17, 132, 0, 1}))
                                        .setPort(data.consumeInt(0, 70000))
                                        .setEndPort(data.consumeInt(0, 70000)));
            }
            if (data.consumeBoolean()) {
                p.addInboundRules(r);
            } else {
                p.addOutboundRules(r);
            }
        }
        return p.build();
    }

    private static WorkloadEndpoint endpoint(FuzzedDataProvider data) {
        WorkloadEndpoint.Builder e = WorkloadEndpoint.newBuilder();
        for (int n = data.consumeInt(0, 2); n > 0; n--) {
            e.addIps(member(data));
        }
        for (int n = data.consumeInt(0, 2); n > 0; n--) {
            TierInfo.Builder t =
                    TierInfo.newBuilder().setName(data.pickValue(TIERS)).setDefaultActionValue(data.consumeInt(0, 4));
            if (data.consumeBoolean()) {
                t.addIngressPolicies(data.pickValue(NAMES));
            }
            if (data.consumeBoolean()) {
                t.addEgressPolicies(data.pickValue(NAMES));
            }
            e.addTiers(t);
        }
        if (data.consumeBoolean()) {
            e.putLabels("app", data.consumeString(8));
        }
        return e.build();
    }

    // ------------------------------------------------------------------ the model

    /** What the contract says the state and the next sequence are, kept in plain maps. */
    private static final class Model {
        static final String GAP = "a sequence gap";
        private static final Comparator<PolicyId> POLICY_ORDER =
                Comparator.comparing(PolicyId::getTier).thenComparing(PolicyId::getName);
        private static final Comparator<EndpointId> ENDPOINT_ORDER =
                Comparator.comparing(EndpointId::getNamespace).thenComparing(EndpointId::getPod);

        boolean started;
        long last;
        final Map<String, IpSet> sets = new TreeMap<>();
        final Map<PolicyId, ActivePolicy> policies = new TreeMap<>(POLICY_ORDER);
        final Map<EndpointId, Endpoint> endpoints = new TreeMap<>(ENDPOINT_ORDER);
        /** The last NodeUpdate's ranges that parse, canonical, each once, sorted; the others are left out. */
        List<String> podCidrs = List.of();

        /** Why the contract rejects the message, or null when it applies. */
        String rejection(ToAgent m) {
            if (started && m.getSequence() != last + 1) { // uint64: wraps like a long
                return GAP;
            }
            if (m.getPayloadCase() == ToAgent.PayloadCase.PAYLOAD_NOT_SET) {
                return "no payload";
            }
            if (m.hasIpSetDeltaUpdate()
                    && !sets.containsKey(m.getIpSetDeltaUpdate().getId())) {
                return "a delta for an unknown set";
            }
            return null;
        }

        void apply(ToAgent m) {
            switch (m.getPayloadCase()) {
                case IP_SET_UPDATE -> {
                    IpSetUpdate u = m.getIpSetUpdate();
                    sets.put(
                            u.getId(),
                            IpSet.newBuilder()
                                    .setId(u.getId())
                                    .setTypeValue(u.getTypeValue())
                                    .addAllMembers(new TreeSet<>(u.getMembersList()))
                                    .build());
                }
                case IP_SET_DELTA_UPDATE -> {
                    IpSetDeltaUpdate d = m.getIpSetDeltaUpdate();
                    IpSet old = sets.get(d.getId());
                    TreeSet<String> members = new TreeSet<>(old.getMembersList());
                    members.removeAll(d.getRemovedMembersList());
                    members.addAll(d.getAddedMembersList());
                    sets.put(
                            d.getId(),
                            old.toBuilder()
                                    .clearMembers()
                                    .addAllMembers(members)
                                    .build());
                }
                case IP_SET_REMOVE -> sets.remove(m.getIpSetRemove().getId());
                case ACTIVE_POLICY_UPDATE ->
                    policies.put(
                            m.getActivePolicyUpdate().getId(),
                            ActivePolicy.newBuilder()
                                    .setId(m.getActivePolicyUpdate().getId())
                                    .setPolicy(m.getActivePolicyUpdate().getPolicy())
                                    .build());
                case ACTIVE_POLICY_REMOVE ->
                    policies.remove(m.getActivePolicyRemove().getId());
                case WORKLOAD_ENDPOINT_UPDATE ->
                    endpoints.put(
                            m.getWorkloadEndpointUpdate().getId(),
                            Endpoint.newBuilder()
                                    .setId(m.getWorkloadEndpointUpdate().getId())
                                    .setEndpoint(m.getWorkloadEndpointUpdate().getEndpoint())
                                    .build());
                case WORKLOAD_ENDPOINT_REMOVE ->
                    endpoints.remove(m.getWorkloadEndpointRemove().getId());
                case NODE_UPDATE -> {
                    TreeSet<String> usable = new TreeSet<>(); // sorted, as the digest sorts them
                    for (String text : m.getNodeUpdate().getPodCidrsList()) {
                        Cidr c = Cidr.tryParse(text);
                        if (c != null) {
                            usable.add(c.toString());
                        }
                    }
                    podCidrs = List.copyOf(usable);
                }
                default -> {}
            }
            started = true;
            last = m.getSequence();
        }

        void reset() {
            started = false;
            sets.clear();
            policies.clear();
            endpoints.clear();
            podCidrs = List.of();
        }

        NodeSnapshot snapshot() {
            return NodeSnapshot.newBuilder()
                    .setNode(NODE)
                    .addAllIpSets(sets.values())
                    .addAllPolicies(policies.values())
                    .addAllEndpoints(endpoints.values())
                    .addAllPodCidrs(podCidrs)
                    .build();
        }
    }
}
