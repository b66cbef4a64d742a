// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rule phase of a compile: every policy's rules flattened into parallel arrays (peers as IP-set
 * numbers, ipBlocks as range sets, domain-name sets; port clauses), and the policies by id for the
 * endpoint phase. Depends only on the policies and the set numbers, so an index whose policies and
 * sets did not change keeps it as it is. Immutable once built.
 */
final class CompiledRules {

    /** Tier name -> policy name -> policy number (the endpoint phase looks up names without building ids). */
    private final Map<String, Map<String, Integer>> policyIndex;

    final PolicyId[] policyIds;
    // [policy * 2 + direction] -> range of rules
    final int[] polRuleStart;
    final int[] polRuleEnd;
    final int[] ruleAction;
    final boolean[] ruleAllPeers;
    final int[] rulePolicy;
    final String[] ruleIds;
    final int[] ruleSetStart;
    final int[] ruleSetEnd;
    final int[] ruleSets;
    final int[] ruleDomainStart;
    final int[] ruleDomainEnd;
    final int[] ruleDomains;
    final RangeSet[] ruleV4;
    final RangeSet[] ruleV6;
    final int[] rulePortStart;
    final int[] rulePortEnd;
    final int[] portProto;
    final int[] portLo;
    final int[] portHi;
    final int[] portNamedSet;
    /** The numbered clauses' port classes (programs keep a mask per class). */
    final PortClasses portClasses;
    /** The domain sets the rules name (the endpoint phase appends its watches to a copy). */
    final DomainSets domainSets;

    final ProblemList problems;

    private CompiledRules(Builder b) {
        Map<String, Map<String, Integer>> byTier = new HashMap<>();
        b.policyIndex.forEach((id, n) ->
                byTier.computeIfAbsent(id.getTier(), t -> new HashMap<>()).put(id.getName(), n));
        policyIndex = byTier;
        policyIds = b.policyIds.toArray(new PolicyId[0]);
        polRuleStart = b.polRuleStart.toArray();
        polRuleEnd = b.polRuleEnd.toArray();
        ruleAction = b.ruleAction.toArray();
        ruleAllPeers = new boolean[ruleAction.length];
        for (int r = 0; r < ruleAllPeers.length; r++) {
            ruleAllPeers[r] = b.ruleAllPeers.get(r) != 0;
        }
        rulePolicy = b.rulePolicy.toArray();
        ruleIds = b.ruleIds.toArray(new String[0]);
        ruleSetStart = b.ruleSetStart.toArray();
        ruleSetEnd = b.ruleSetEnd.toArray();
        ruleSets = b.ruleSets.toArray();
        ruleDomainStart = b.ruleDomainStart.toArray();
        ruleDomainEnd = b.ruleDomainEnd.toArray();
        ruleDomains = b.ruleDomains.toArray();
        ruleV4 = b.ruleV4.toArray(new RangeSet[0]);
        ruleV6 = b.ruleV6.toArray(new RangeSet[0]);
        rulePortStart = b.rulePortStart.toArray();
        rulePortEnd = b.rulePortEnd.toArray();
        portProto = b.portProto.toArray();
        portLo = b.portLo.toArray();
        portHi = b.portHi.toArray();
        portNamedSet = b.portNamedSet.toArray();
        portClasses = PortClasses.of(portProto, portLo, portHi, portNamedSet);
        domainSets = b.domainSets;
        problems = b.problems;
    }

    /**
     * Compiles the policies against the index's IP sets. Every unusable part is a problem; it makes
     * an Allow rule's part match nothing and a Deny or Pass rule deny all ({@link UnusableParts}).
     */
    static CompiledRules compile(List<ActivePolicy> policies, SetNumbers sets) {
        Builder b = new Builder(sets);
        for (ActivePolicy policy : policies) {
            b.addPolicy(policy);
        }
        return new CompiledRules(b);
    }

    /** The number of the policy (tier, name), or -1 when the snapshot has no such policy. */
    int policy(String tier, String name) {
        Map<String, Integer> names = policyIndex.get(tier);
        Integer n = names == null ? null : names.get(name);
        return n == null ? -1 : n;
    }

    int ruleCount() {
        return ruleAction.length;
    }

    private static final class Builder {
        private final SetNumbers sets;
        final ProblemList problems = new ProblemList();
        final DomainSets domainSets = new DomainSets();
        final Map<PolicyId, Integer> policyIndex = new HashMap<>();
        final List<PolicyId> policyIds = new ArrayList<>();
        final IntList polRuleStart = new IntList();
        final IntList polRuleEnd = new IntList();
        final IntList ruleAction = new IntList();
        final IntList ruleAllPeers = new IntList();
        final IntList rulePolicy = new IntList();
        final List<String> ruleIds = new ArrayList<>();
        final IntList ruleSetStart = new IntList();
        final IntList ruleSetEnd = new IntList();
        final IntList ruleSets = new IntList();
        final IntList ruleDomainStart = new IntList();
        final IntList ruleDomainEnd = new IntList();
        final IntList ruleDomains = new IntList();
        final List<RangeSet> ruleV4 = new ArrayList<>();
        final List<RangeSet> ruleV6 = new ArrayList<>();
        final IntList rulePortStart = new IntList();
        final IntList rulePortEnd = new IntList();
        final IntList portProto = new IntList();
        final IntList portLo = new IntList();
        final IntList portHi = new IntList();
        final IntList portNamedSet = new IntList();

        Builder(SetNumbers sets) {
            this.sets = sets;
        }

        void addPolicy(ActivePolicy policy) {
            PolicyId id = policy.getId();
            if (policyIndex.containsKey(id)) {
                problems.add("policy " + id.getTier() + "/" + id.getName() + " appears twice; the first is used");
                return;
            }
            int index = policyIds.size();
            policyIndex.put(id, index);
            policyIds.add(id);
            // Two slots per policy: [EGRESS] outbound rules, [INGRESS] inbound rules.
            int egressStart = ruleAction.size();
            for (Rule rule : policy.getPolicy().getOutboundRulesList()) {
                addRule(index, rule, true);
            }
            int ingressStart = ruleAction.size();
            for (Rule rule : policy.getPolicy().getInboundRulesList()) {
                addRule(index, rule, false);
            }
            polRuleStart.add(egressStart);
            polRuleEnd.add(ingressStart);
            polRuleStart.add(ingressStart);
            polRuleEnd.add(ruleAction.size());
        }

        /** The set's number when it exists and has the type; else -1. */
        private int set(String id, IpSetType type) {
            int n = sets.number(id);
            return n >= 0 && sets.type(n) == type ? n : -1;
        }

        private void addRule(int policy, Rule rule, boolean outbound) {
            String where = "policy " + policyIds.get(policy).getTier() + "/"
                    + policyIds.get(policy).getName() + " rule " + rule.getRuleId();
            int action = switch (rule.getAction()) {
                case ALLOW -> SnapshotCompiler.ACTION_ALLOW;
                case DENY -> SnapshotCompiler.ACTION_DENY;
                case PASS -> SnapshotCompiler.ACTION_PASS;
                default -> {
                    problems.add(where + ": action " + rule.getAction() + " treated as DENY");
                    yield SnapshotCompiler.ACTION_DENY;
                }
            };
            UnusableParts unusable = new UnusableParts(where, action, problems);
            int setStart = ruleSets.size();
            int domainStart = ruleDomains.size();
            int portStart = portProto.size();
            RangeSet.Builder b4 = new RangeSet.Builder();
            RangeSet.Builder b6 = new RangeSet.Builder();
            for (Peer peer : rule.getPeersList()) {
                addPeer(peer, outbound, b4, b6, unusable);
            }
            for (PortMatch port : rule.getPortsList()) {
                addPort(port, unusable);
            }
            // Per the contract all_peers counts only when no peer is given: a peer list is never widened.
            boolean allPeers = rule.getAllPeers() && rule.getPeersCount() == 0;
            if (unusable.ruleDeniesAll()) {
                // "Deny all": no peer list (all peers), no port clause (every port and protocol).
                action = SnapshotCompiler.ACTION_DENY;
                allPeers = true;
                ruleSets.truncate(setStart);
                ruleDomains.truncate(domainStart);
                b4 = new RangeSet.Builder();
                b6 = new RangeSet.Builder();
                for (IntList column : List.of(portProto, portLo, portHi, portNamedSet)) {
                    column.truncate(portStart);
                }
            }
            ruleAction.add(action);
            rulePolicy.add(policy);
            ruleIds.add(rule.getRuleId());
            ruleAllPeers.add(allPeers ? 1 : 0);
            ruleSetStart.add(setStart);
            ruleSetEnd.add(ruleSets.size());
            ruleDomainStart.add(domainStart);
            ruleDomainEnd.add(ruleDomains.size());
            ruleV4.add(b4.isEmpty() ? null : b4.build());
            ruleV6.add(b6.isEmpty() ? null : b6.build());
            rulePortStart.add(portStart);
            rulePortEnd.add(portProto.size());
        }

        private void addPeer(
                Peer peer, boolean outbound, RangeSet.Builder b4, RangeSet.Builder b6, UnusableParts unusable) {
            switch (peer.getKindCase()) {
                case IP_SET_ID -> {
                    int set = set(peer.getIpSetId(), IpSetType.IP);
                    if (set < 0) {
                        unusable.add("peer ip set " + peer.getIpSetId()
                                + (sets.number(peer.getIpSetId()) < 0
                                        ? " is missing or of an unknown type"
                                        : " is not of type IP"));
                    } else {
                        ruleSets.add(set);
                    }
                }
                case IP_BLOCK -> addBlock(peer.getIpBlock(), b4, b6, unusable);
                case DOMAIN_NAMES -> {
                    String why = DomainSets.unusable(peer.getDomainNames());
                    if (why != null) {
                        unusable.add(why);
                        return;
                    }
                    int d = domainSets.number(unusable.where(), peer.getDomainNames(), problems);
                    if (outbound) {
                        ruleDomains.add(d);
                    } else {
                        unusable.add("a domain-name peer in an inbound rule");
                    }
                }
                // A oneof member this build does not know (a newer control plane's peer kind) arrives as an unknown
                // field.
                default -> unusable.add("peer of no known kind (empty, or newer than this agent)");
            }
        }

        private void addBlock(IpBlock block, RangeSet.Builder b4, RangeSet.Builder b6, UnusableParts unusable) {
            Cidr cidr = Cidr.tryParse(block.getCidr());
            if (cidr == null) {
                unusable.add("invalid cidr \"" + block.getCidr() + "\"");
                return;
            }
            List<Cidr> excepts = new ArrayList<>();
            for (String e : block.getExceptList()) {
                Cidr except = Cidr.tryParse(e);
                if (except == null) {
                    // Without the except an Allow's block would allow more than written: the whole block is unusable.
                    unusable.add("invalid except \"" + e + "\" (the whole block is unusable)");
                    return;
                }
                excepts.add(except);
            }
            (cidr.family() == IpAddress.V4 ? b4 : b6).add(cidr, excepts);
        }

        private void addPort(PortMatch port, UnusableParts unusable) {
            if (!port.getNamedPortIpSetId().isEmpty()) {
                int set = set(port.getNamedPortIpSetId(), IpSetType.IP_AND_PORT);
                if (set < 0) {
                    unusable.add("named-port ip set " + port.getNamedPortIpSetId()
                            + (sets.number(port.getNamedPortIpSetId()) < 0
                                    ? " is missing or of an unknown type"
                                    : " is not of type IP_AND_PORT"));
                }
                addPortClause(0, 0, 0, set < 0 ? SnapshotCompiler.NEVER : set);
                return;
            }
            int protocol = port.getProtocolValue();
            // uint32 on the wire: read unsigned, or a port of 2^31 and more would be a negative start.
            long lo = Integer.toUnsignedLong(port.getPort());
            long end = Integer.toUnsignedLong(port.getEndPort());
            long hi = lo == 0 ? 65535 : (end == 0 ? lo : end);
            boolean valid = (protocol == Protocol.TCP_VALUE
                            || protocol == Protocol.UDP_VALUE
                            || protocol == Protocol.SCTP_VALUE)
                    && lo <= 65535
                    && lo <= hi;
            if (!valid) {
                // The protocol by number: one this build does not know prints as UNRECOGNIZED.
                unusable.add("port clause "
                        + (port.getProtocol() == Protocol.UNRECOGNIZED ? "protocol " + protocol : port.getProtocol())
                        + " " + lo + "-" + end + " is invalid");
            }
            addPortClause(
                    protocol,
                    (int) Math.min(lo, 65535),
                    (int) Math.min(hi, 65535),
                    valid ? SnapshotCompiler.NOT_NAMED : SnapshotCompiler.NEVER);
        }

        private void addPortClause(int protocol, int lo, int hi, int namedSet) {
            portProto.add(protocol);
            portLo.add(lo);
            portHi.add(hi);
            portNamedSet.add(namedSet);
        }
    }
}
