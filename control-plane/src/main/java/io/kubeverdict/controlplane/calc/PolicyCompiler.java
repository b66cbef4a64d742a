// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * NetworkPolicy (networking.k8s.io/v1) -> {@link CompiledPolicy}. Whatever cannot be used is
 * reported and made to match less, never more: an unusable peer is dropped (a rule left without
 * peers matches nothing, all_peers stays false); an unusable port clause is dropped (a rule left
 * without any matches nothing); an unusable spec.podSelector makes the policy select every pod
 * of its namespace with no rules.
 */
public final class PolicyCompiler {
    public static final String TIER = "default";

    /** IANA_SVC_NAME, as Kubernetes validates named ports. */
    private static final Pattern PORT_NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?");

    private PolicyCompiler() {}

    public static CompiledPolicy compile(NetworkPolicy np) {
        return new Run(np).compile();
    }

    private static final class Run {
        final NetworkPolicy np;
        final String ns;
        final String name;
        final List<PolicyProblem> problems = new ArrayList<>();
        final Set<IpSetDef> sets = new LinkedHashSet<>();
        final java.util.Map<String, IpSetDef> defsById = new java.util.HashMap<>();
        Selector podSelector;

        Run(NetworkPolicy np) {
            this.np = np;
            this.ns = np.getMetadata().getNamespace() == null
                    ? "default"
                    : np.getMetadata().getNamespace();
            this.name = np.getMetadata().getName();
        }

        void problem(String field, String message) {
            problems.add(new PolicyProblem(ns, name, field, message));
        }

        CompiledPolicy compile() {
            NetworkPolicySpec spec = np.getSpec() == null ? new NetworkPolicySpec() : np.getSpec();
            List<NetworkPolicyIngressRule> ingressRules = nonNull(spec.getIngress());
            List<NetworkPolicyEgressRule> egressRules = nonNull(spec.getEgress());
            boolean usable = true;
            try {
                podSelector = Selector.of(spec.getPodSelector());
            } catch (Selector.InvalidSelectorException e) {
                problem(
                        "spec.podSelector",
                        e.getMessage() + "; the policy isolates every pod of its namespace and allows nothing");
                podSelector = Selector.ALL;
                usable = false;
            }
            boolean ingress;
            boolean egress;
            List<String> types = nonNull(spec.getPolicyTypes());
            if (types.isEmpty()) {
                ingress = true;
                egress = !egressRules.isEmpty();
            } else {
                ingress = false;
                egress = false;
                for (int i = 0; i < types.size(); i++) {
                    String t = types.get(i);
                    if ("Ingress".equals(t)) {
                        ingress = true;
                    } else if ("Egress".equals(t)) {
                        egress = true;
                    } else {
                        problem("spec.policyTypes[" + i + "]", "unknown policy type \"" + t + "\"");
                    }
                }
                if (!ingress && !egress) {
                    // Only unknown types: isolate in both directions rather than in none.
                    ingress = true;
                    egress = true;
                    usable = false;
                    problem("spec.policyTypes", "no known policy type; isolating both directions with no rules");
                }
            }
            Policy.Builder policy = Policy.newBuilder();
            if (usable && ingress) {
                for (int i = 0; i < ingressRules.size(); i++) {
                    NetworkPolicyIngressRule r = ingressRules.get(i);
                    if (r == null) {
                        policy.addInboundRules(nullRule("spec.ingress[" + i + "]", "ingress[" + i + "]"));
                        continue;
                    }
                    policy.addInboundRules(rule(
                            "spec.ingress[" + i + "]", "ingress[" + i + "]", r.getFrom(), "from", r.getPorts(), true));
                }
            }
            if (usable && egress) {
                for (int i = 0; i < egressRules.size(); i++) {
                    NetworkPolicyEgressRule r = egressRules.get(i);
                    if (r == null) {
                        policy.addOutboundRules(nullRule("spec.egress[" + i + "]", "egress[" + i + "]"));
                        continue;
                    }
                    policy.addAllOutboundRules(scopeEgressNamedPorts(
                            rule("spec.egress[" + i + "]", "egress[" + i + "]", r.getTo(), "to", r.getPorts(), false)));
                }
            }
            for (Rule r : policy.getInboundRulesList()) {
                referenced(r);
            }
            for (Rule r : policy.getOutboundRulesList()) {
                referenced(r);
            }
            ActivePolicy proto = ActivePolicy.newBuilder()
                    .setId(PolicyId.newBuilder().setTier(TIER).setName(ns + "/" + name))
                    .setPolicy(policy)
                    .build();
            return new CompiledPolicy(
                    ns, name, podSelector, ingress, egress, proto, List.copyOf(sets), List.copyOf(problems));
        }

        /** A null list item (`ingress: [~]`): the API server would read an empty, allow-all rule; we narrow. */
        Rule nullRule(String field, String ruleId) {
            problem(field, "empty (null) rule; it matches nothing");
            return Rule.newBuilder()
                    .setAction(Action.ALLOW)
                    .setRuleId(ruleId)
                    .setAllPeers(false)
                    .build();
        }

        Rule rule(
                String field,
                String ruleId,
                List<NetworkPolicyPeer> peers,
                String peerField,
                List<NetworkPolicyPort> ports,
                boolean inbound) {
            Rule.Builder rule = Rule.newBuilder().setAction(Action.ALLOW).setRuleId(ruleId);
            List<IpSetDef> ruleSets = new ArrayList<>();
            if (peers == null || peers.isEmpty()) {
                rule.setAllPeers(true);
            } else {
                for (int j = 0; j < peers.size(); j++) {
                    peer(field + "." + peerField + "[" + j + "]", peers.get(j), ruleSets)
                            .ifPresent(rule::addPeers);
                }
            }
            if (ports != null && !ports.isEmpty()) {
                for (int j = 0; j < ports.size(); j++) {
                    port(field + ".ports[" + j + "]", ports.get(j), inbound, ruleSets)
                            .ifPresent(rule::addPorts);
                }
                if (rule.getPortsCount() == 0) {
                    // Every port clause was unusable: an empty list would mean "all ports".
                    problem(field + ".ports", "no usable port; the rule matches nothing");
                    rule.clearPorts().clearPeers().setAllPeers(false);
                    return rule.build();
                }
            }
            if (!rule.getAllPeers() && rule.getPeersCount() == 0) {
                problem(field + "." + peerField, "no usable peer; the rule matches nothing");
                // Its named ports' sets are not kept: the rule must not refer to them.
                return rule.clearPorts().build();
            }
            for (IpSetDef d : ruleSets) {
                defsById.put(d.id(), d);
            }
            return rule.build();
        }

        /** The policy's sets are exactly those its final rules refer to, in order of first use. */
        void referenced(Rule r) {
            for (Peer p : r.getPeersList()) {
                if (p.hasIpSetId()) {
                    sets.add(defsById.get(p.getIpSetId()));
                }
            }
            for (PortMatch m : r.getPortsList()) {
                if (!m.getNamedPortIpSetId().isEmpty()) {
                    sets.add(defsById.get(m.getNamedPortIpSetId()));
                }
            }
        }

        /**
         * An egress rule's named ports resolve on the destination, which must also match one of
         * the rule's peers. Resolving them over every pod of the cluster is exact but makes every
         * node with such a rule carry a cluster-wide set. Instead, since peers and ports are each
         * OR'ed, (P1 or .. Pn) and (named or numeric) is split into rules with the same rule id:
         * the numeric ports with all peers; for each selector peer Pi, all_peers with the named
         * ports resolved over Pi's pods only (membership implies the peer); for the ipBlock peers,
         * the named ports resolved over every pod (an ipBlock may cover any pod).
         */
        List<Rule> scopeEgressNamedPorts(Rule r) {
            List<PortMatch> numeric = new ArrayList<>();
            List<PortMatch> named = new ArrayList<>();
            for (PortMatch m : r.getPortsList()) {
                (m.getNamedPortIpSetId().isEmpty() ? numeric : named).add(m);
            }
            if (r.getAllPeers() || r.getPeersCount() == 0 || named.isEmpty()) {
                return List.of(r);
            }
            Set<Rule> out = new LinkedHashSet<>();
            if (!numeric.isEmpty()) {
                out.add(r.toBuilder().clearPorts().addAllPorts(numeric).build());
            }
            List<Peer> blocks = new ArrayList<>();
            for (Peer p : r.getPeersList()) {
                if (!p.hasIpSetId()) {
                    blocks.add(p);
                    continue;
                }
                IpSetDef peer = defsById.get(p.getIpSetId());
                Rule.Builder scoped = r.toBuilder().clearPeers().clearPorts().setAllPeers(true);
                for (PortMatch m : named) {
                    IpSetDef port = defsById.get(m.getNamedPortIpSetId());
                    IpSetDef def = IpSetDef.namedPort(
                            peer.namespace(),
                            peer.namespaceSelector(),
                            peer.podSelector(),
                            port.portName(),
                            port.protocol());
                    defsById.put(def.id(), def);
                    scoped.addPorts(m.toBuilder().setNamedPortIpSetId(def.id()));
                }
                out.add(scoped.build());
            }
            if (!blocks.isEmpty()) {
                out.add(r.toBuilder()
                        .clearPeers()
                        .addAllPeers(blocks)
                        .clearPorts()
                        .addAllPorts(named)
                        .build());
            }
            return List.copyOf(out);
        }

        Optional<Peer> peer(String field, NetworkPolicyPeer p, List<IpSetDef> ruleSets) {
            if (p == null) {
                problem(field, "empty peer; dropped");
                return Optional.empty();
            }
            IPBlock block = p.getIpBlock();
            if (block != null) {
                if (p.getPodSelector() != null || p.getNamespaceSelector() != null) {
                    problem(field, "ipBlock cannot be combined with selectors; peer dropped");
                    return Optional.empty();
                }
                return ipBlock(field + ".ipBlock", block);
            }
            if (p.getPodSelector() == null && p.getNamespaceSelector() == null) {
                problem(field, "peer sets none of podSelector, namespaceSelector, ipBlock; dropped");
                return Optional.empty();
            }
            Selector pods;
            Selector namespaces = null;
            try {
                pods = Selector.of(p.getPodSelector());
            } catch (Selector.InvalidSelectorException e) {
                problem(field + ".podSelector", e.getMessage() + "; peer dropped");
                return Optional.empty();
            }
            if (p.getNamespaceSelector() != null) {
                try {
                    namespaces = Selector.of(p.getNamespaceSelector());
                } catch (Selector.InvalidSelectorException e) {
                    problem(field + ".namespaceSelector", e.getMessage() + "; peer dropped");
                    return Optional.empty();
                }
            }
            IpSetDef def = namespaces == null ? IpSetDef.pods(ns, pods) : IpSetDef.podsInNamespaces(namespaces, pods);
            ruleSets.add(def);
            return Optional.of(Peer.newBuilder().setIpSetId(def.id()).build());
        }

        Optional<Peer> ipBlock(String field, IPBlock block) {
            Cidr cidr = Cidr.tryParse(block.getCidr());
            if (cidr == null) {
                problem(field + ".cidr", "invalid CIDR \"" + block.getCidr() + "\"; peer dropped");
                return Optional.empty();
            }
            IpBlock.Builder b = IpBlock.newBuilder().setCidr(cidr.toString());
            List<String> except = nonNull(block.getExcept());
            for (int i = 0; i < except.size(); i++) {
                Cidr e = Cidr.tryParse(except.get(i));
                if (e == null || !cidr.contains(e)) {
                    // Ignoring a bad except would widen the block: drop the whole peer.
                    problem(
                            field + ".except[" + i + "]",
                            (e == null ? "invalid CIDR \"" : "not inside the cidr: \"") + except.get(i)
                                    + "\"; peer dropped");
                    return Optional.empty();
                }
                b.addExcept(e.toString());
            }
            return Optional.of(Peer.newBuilder().setIpBlock(b).build());
        }

        Optional<PortMatch> port(String field, NetworkPolicyPort p, boolean inbound, List<IpSetDef> ruleSets) {
            if (p == null) {
                problem(field, "empty port entry; dropped");
                return Optional.empty();
            }
            Protocol proto = Protocols.parse(p.getProtocol());
            if (proto == null) {
                problem(field + ".protocol", "unsupported protocol \"" + p.getProtocol() + "\"; port dropped");
                return Optional.empty();
            }
            PortMatch.Builder m = PortMatch.newBuilder().setProtocol(proto);
            IntOrString port = p.getPort();
            Integer endPort = p.getEndPort();
            if (port == null || (port.getIntVal() == null && port.getStrVal() == null)) {
                if (endPort != null) {
                    problem(field + ".endPort", "endPort without port; port dropped");
                    return Optional.empty();
                }
                return Optional.of(m.build());
            }
            if (port.getIntVal() != null) {
                int v = port.getIntVal();
                if (v < 1 || v > 65535) {
                    problem(field + ".port", "port " + v + " out of range 1-65535; port dropped");
                    return Optional.empty();
                }
                m.setPort(v);
                if (endPort != null) {
                    if (endPort < v || endPort > 65535) {
                        problem(field + ".endPort", "endPort " + endPort + " must be in " + v + "-65535; port dropped");
                        return Optional.empty();
                    }
                    if (endPort > v) {
                        m.setEndPort(endPort);
                    }
                }
                return Optional.of(m.build());
            }
            String portName = port.getStrVal();
            if (!PORT_NAME.matcher(portName).matches()
                    || portName.contains("--")
                    || portName.chars().noneMatch(c -> c >= 'a' && c <= 'z')) {
                problem(field + ".port", "invalid port name \"" + portName + "\"; port dropped");
                return Optional.empty();
            }
            if (endPort != null) {
                problem(field + ".endPort", "endPort with a named port; port dropped");
                return Optional.empty();
            }
            // Named ports resolve on the destination pod: for ingress that is a pod this policy
            // selects, for egress any pod in the cluster (the rule's peers still narrow it).
            IpSetDef def = inbound
                    ? IpSetDef.namedPort(ns, null, podSelector, portName, proto)
                    : IpSetDef.namedPort(null, Selector.ALL, Selector.ALL, portName, proto);
            ruleSets.add(def);
            return Optional.of(m.setNamedPortIpSetId(def.id()).build());
        }
    }

    private static <T> List<T> nonNull(List<T> l) {
        return l == null ? List.of() : l;
    }
}
