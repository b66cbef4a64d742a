// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.controlplane.calc.AdminPolicy.DomainNames;
import io.kubeverdict.controlplane.calc.AdminPolicy.Everything;
import io.kubeverdict.controlplane.calc.AdminPolicy.NamedPort;
import io.kubeverdict.controlplane.calc.AdminPolicy.Networks;
import io.kubeverdict.controlplane.calc.AdminPolicy.Nodes;
import io.kubeverdict.controlplane.calc.AdminPolicy.Pods;
import io.kubeverdict.controlplane.calc.AdminPolicy.PortRange;
import io.kubeverdict.controlplane.calc.AdminPolicy.Subject;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@link AdminPolicy} -> {@link CompiledAdminPolicy}: rules in order with their actions, peers as
 * content-derived IP sets shared with NetworkPolicy peers ({@code namespaces}/{@code pods} become
 * the same {@link IpSetDef} a namespaceSelector(+podSelector) peer does), node-address sets for
 * {@code nodes}, ipBlocks for {@code networks} (which therefore match pod addresses too).
 *
 * <p>Named ports resolve on the destination pod, on whatever protocol its container port of that
 * name has: one clause per protocol. Ingress: over the policy's subject pods (the destination is
 * one of them). Egress: the destination must also match one of the rule's peers (named ports
 * combine only with pod peers), so the rule is split like a NetworkPolicy egress rule — numeric
 * ports with all peers, then per peer a rule with the named ports resolved over that peer's pods
 * — consecutive, same id and action, which keeps first-match semantics.
 */
public final class AdminPolicyCompiler {
    public static final String ADMIN_TIER = "admin";
    public static final String BASELINE_TIER = "baseline";
    private static final List<Protocol> PORT_PROTOCOLS = List.of(Protocol.TCP, Protocol.UDP, Protocol.SCTP);

    private AdminPolicyCompiler() {}

    /** The policy's name within its tier: its own name, with "cnp:" for ClusterNetworkPolicies (a name of their own). */
    public static String policyName(AdminPolicyKind kind, String name) {
        return kind == AdminPolicyKind.CLUSTER_NETWORK_POLICY ? "cnp:" + name : name;
    }

    public static CompiledAdminPolicy compile(AdminPolicy policy) {
        Set<IpSetDef> sets = new LinkedHashSet<>();
        Set<NodeSetDef> nodeSets = new LinkedHashSet<>();
        Set<io.kubeverdict.proto.v1.DomainNames> domains = new LinkedHashSet<>();
        Policy.Builder proto = Policy.newBuilder();
        for (AdminPolicy.Rule r : policy.ingress()) {
            proto.addAllInboundRules(rules(r, policy.subject(), true, sets, nodeSets, domains));
        }
        for (AdminPolicy.Rule r : policy.egress()) {
            proto.addAllOutboundRules(rules(r, policy.subject(), false, sets, nodeSets, domains));
        }
        String tier = policy.tier() == AdminPolicy.Tier.ADMIN ? ADMIN_TIER : BASELINE_TIER;
        ActivePolicy active = ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier(tier).setName(policyName(policy.kind(), policy.name())))
                .setPolicy(proto)
                .build();
        return new CompiledAdminPolicy(
                policy.kind(),
                policy.name(),
                policy.tier(),
                policy.priority(),
                policy.subject(),
                !policy.ingress().isEmpty(),
                !policy.egress().isEmpty(),
                active,
                List.copyOf(sets),
                List.copyOf(nodeSets),
                List.copyOf(domains),
                policy.problems());
    }

    /** The contract's form of a domainNames peer: its patterns and the learned-set id derived from them. */
    static io.kubeverdict.proto.v1.DomainNames domainNames(DomainNames peer) {
        StringBuilder canonical = new StringBuilder("domains=");
        for (String p : peer.patterns()) {
            Selector.lengthPrefixed(canonical, p);
        }
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest(canonical.toString().getBytes(StandardCharsets.UTF_8));
            return io.kubeverdict.proto.v1.DomainNames.newBuilder()
                    .addAllPatterns(peer.patterns())
                    .setLearnedSetId("d:" + IpSetDef.base32(d, 26))
                    .build();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present", e);
        }
    }

    private static List<Rule> rules(
            AdminPolicy.Rule r,
            Subject subject,
            boolean ingress,
            Set<IpSetDef> sets,
            Set<NodeSetDef> nodeSets,
            Set<io.kubeverdict.proto.v1.DomainNames> domains) {
        Rule.Builder base = Rule.newBuilder()
                .setRuleId(r.id())
                .setAction(
                        switch (r.action()) {
                            case ALLOW -> io.kubeverdict.proto.v1.Action.ALLOW;
                            case DENY -> io.kubeverdict.proto.v1.Action.DENY;
                            case PASS -> io.kubeverdict.proto.v1.Action.PASS;
                        });
        List<AdminPolicy.Port> ports = r.ports() == null ? List.of() : r.ports();
        List<PortMatch> numeric = new ArrayList<>();
        List<String> named = new ArrayList<>();
        for (AdminPolicy.Port p : ports) {
            if (p instanceof PortRange range) {
                PortMatch.Builder m =
                        PortMatch.newBuilder().setProtocol(range.protocol()).setPort(range.lo());
                if (range.hi() > range.lo()) {
                    m.setEndPort(range.hi());
                }
                numeric.add(m.build());
            } else {
                named.add(((NamedPort) p).name());
            }
        }
        List<Peer> peers = new ArrayList<>();
        boolean allPeers = false;
        for (AdminPolicy.Peer p : r.peers()) {
            if (p instanceof Everything) {
                allPeers = true;
            } else if (p instanceof Pods pods) {
                IpSetDef def = IpSetDef.podsInNamespaces(pods.namespaces(), pods.pods());
                sets.add(def);
                peers.add(Peer.newBuilder().setIpSetId(def.id()).build());
            } else if (p instanceof DomainNames names) {
                io.kubeverdict.proto.v1.DomainNames proto = domainNames(names);
                domains.add(proto);
                peers.add(Peer.newBuilder().setDomainNames(proto).build());
            } else if (p instanceof Nodes nodes) {
                NodeSetDef def = new NodeSetDef(nodes.nodes());
                nodeSets.add(def);
                peers.add(Peer.newBuilder().setIpSetId(def.id()).build());
            } else {
                for (Cidr c : ((Networks) p).cidrs()) {
                    peers.add(Peer.newBuilder()
                            .setIpBlock(IpBlock.newBuilder().setCidr(c.toString()))
                            .build());
                }
            }
        }
        if (allPeers) {
            peers.clear(); // "Deny all": all_peers only counts with no peer listed
        }
        if (named.isEmpty()) {
            return List.of(base.setAllPeers(allPeers)
                    .addAllPeers(peers)
                    .addAllPorts(numeric)
                    .build());
        }
        if (ingress) {
            List<PortMatch> all = new ArrayList<>(numeric);
            all.addAll(namedPorts(named, subject.namespaces(), subject.pods(), sets));
            return List.of(base.setAllPeers(allPeers)
                    .addAllPeers(peers)
                    .addAllPorts(all)
                    .build());
        }
        // Egress with named ports: the reader allows them only with pod peers.
        List<Rule> out = new ArrayList<>();
        if (!numeric.isEmpty()) {
            out.add(base.clone().addAllPeers(peers).addAllPorts(numeric).build());
        }
        for (AdminPolicy.Peer p : r.peers()) {
            Pods pods = (Pods) p;
            out.add(base.clone()
                    .setAllPeers(true)
                    .addAllPorts(namedPorts(named, pods.namespaces(), pods.pods(), sets))
                    .build());
        }
        return out;
    }

    /** For each name, one clause per protocol, resolved over the pods of (namespaces, pods). */
    private static List<PortMatch> namedPorts(
            List<String> names, Selector namespaces, Selector pods, Set<IpSetDef> sets) {
        List<PortMatch> out = new ArrayList<>();
        for (String name : names) {
            for (Protocol protocol : PORT_PROTOCOLS) {
                IpSetDef def = IpSetDef.namedPort(null, namespaces, pods, name, protocol);
                sets.add(def);
                out.add(PortMatch.newBuilder()
                        .setProtocol(protocol)
                        .setNamedPortIpSetId(def.id())
                        .build());
            }
        }
        return out;
    }
}
