// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.state.SelectedAddresses;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Which local endpoints' verdicts can differ between two generations of the node's state, so that
 * only their connections are looked at again. Pure calculation over two snapshots.
 *
 * <p>An endpoint's verdicts (for connections from it and to it) depend only on its addresses, its
 * tier lists, the policies those name and the IP sets those policies use (peers and named ports);
 * a peer that is another local endpoint matters only through its membership in those sets. So an
 * endpoint selected now is affected when it is new, was not selected before, its addresses or
 * tiers changed, one of its policies changed, or one of their sets changed. An endpoint no policy
 * selects now allows everything from its side and is never affected.
 */
public final class AffectedEndpoints {
    private AffectedEndpoints() {}

    /**
     * One endpoint whose connections must be judged again.
     *
     * @param addresses its addresses now, plus any it had before
     * @param unjudged whether it may have connections no verdict ever saw (it was not selected
     *     before, is new, or the agent starts): those carry no ADMITTED mark, so its connections
     *     are looked up by address alone
     */
    public record Target(EndpointId id, List<IpAddress> addresses, boolean unjudged) {
        public Target {
            addresses = List.copyOf(addresses);
        }

        /** The union of two targets of the same endpoint. */
        Target merge(Target other) {
            Set<IpAddress> all = new LinkedHashSet<>(addresses);
            all.addAll(other.addresses);
            return new Target(id, new ArrayList<>(all), unjudged || other.unjudged);
        }
    }

    /** Every selected endpoint, as at the agent's start or a resync: nothing is known to be judged. */
    public static List<Target> all(NodeSnapshot now) {
        List<Target> targets = new ArrayList<>();
        for (Endpoint e : now.getEndpointsList()) {
            if (SelectedAddresses.isSelected(e)) {
                targets.add(new Target(e.getId(), addresses(e), true));
            }
        }
        return targets;
    }

    /** The endpoints selected in {@code now} whose verdicts may differ from those of {@code before}. */
    public static List<Target> between(NodeSnapshot before, NodeSnapshot now) {
        Map<EndpointId, Endpoint> old = new HashMap<>();
        for (Endpoint e : before.getEndpointsList()) {
            old.putIfAbsent(e.getId(), e);
        }
        Changes changes = new Changes(before, now);
        List<Target> targets = new ArrayList<>();
        for (Endpoint e : now.getEndpointsList()) {
            if (!SelectedAddresses.isSelected(e)) {
                continue;
            }
            Endpoint was = old.get(e.getId());
            if (was == null || !SelectedAddresses.isSelected(was)) {
                targets.add(new Target(e.getId(), addresses(e), true));
            } else if (!was.getEndpoint().getIpsList().equals(e.getEndpoint().getIpsList())) {
                Set<IpAddress> both = new LinkedHashSet<>(addresses(e));
                both.addAll(addresses(was));
                targets.add(new Target(e.getId(), new ArrayList<>(both), true));
            } else if (!was.getEndpoint().getTiersList().equals(e.getEndpoint().getTiersList()) || changes.affects(e)) {
                targets.add(new Target(e.getId(), addresses(e), false));
            }
        }
        return targets;
    }

    private static List<IpAddress> addresses(Endpoint e) {
        List<IpAddress> out = new ArrayList<>();
        for (String ip : e.getEndpoint().getIpsList()) {
            IpAddress a = IpAddress.tryParse(ip);
            if (a != null) { // the verdict function skips what it cannot parse too
                out.add(a);
            }
        }
        return out;
    }

    /** Policies and sets that differ between two snapshots, compared once each, when first asked. */
    private static final class Changes {
        private final Map<PolicyId, Policy> oldPolicies;
        private final Map<PolicyId, Policy> newPolicies;
        private final Map<String, IpSet> oldSets;
        private final Map<String, IpSet> newSets;
        private final Map<PolicyId, Boolean> policyChanged = new HashMap<>();
        private final Map<String, Boolean> setChanged = new HashMap<>();

        Changes(NodeSnapshot before, NodeSnapshot now) {
            oldPolicies = policies(before);
            newPolicies = policies(now);
            oldSets = sets(before);
            newSets = sets(now);
        }

        boolean affects(Endpoint e) {
            for (TierInfo tier : e.getEndpoint().getTiersList()) {
                for (List<String> names : List.of(tier.getIngressPoliciesList(), tier.getEgressPoliciesList())) {
                    for (String name : names) {
                        if (changed(PolicyId.newBuilder()
                                .setTier(tier.getName())
                                .setName(name)
                                .build())) {
                            return true;
                        }
                    }
                }
            }
            return false;
        }

        private boolean changed(PolicyId id) {
            return policyChanged.computeIfAbsent(id, this::compare);
        }

        private boolean compare(PolicyId id) {
            Policy now = newPolicies.get(id);
            if (!Objects.equals(oldPolicies.get(id), now)) {
                return true;
            }
            if (now == null) {
                return false;
            }
            for (List<Rule> rules : List.of(now.getInboundRulesList(), now.getOutboundRulesList())) {
                for (Rule rule : rules) {
                    for (Peer peer : rule.getPeersList()) {
                        if (peer.hasIpSetId() && setChanged(peer.getIpSetId())) {
                            return true;
                        }
                    }
                    for (PortMatch port : rule.getPortsList()) {
                        if (!port.getNamedPortIpSetId().isEmpty() && setChanged(port.getNamedPortIpSetId())) {
                            return true;
                        }
                    }
                }
            }
            return false;
        }

        private boolean setChanged(String id) {
            return setChanged.computeIfAbsent(id, k -> !Objects.equals(oldSets.get(k), newSets.get(k)));
        }

        /** First occurrence wins, as in the verdict function's compiler. */
        private static Map<PolicyId, Policy> policies(NodeSnapshot s) {
            Map<PolicyId, Policy> out = new HashMap<>();
            for (ActivePolicy p : s.getPoliciesList()) {
                out.putIfAbsent(p.getId(), p.getPolicy());
            }
            return out;
        }

        private static Map<String, IpSet> sets(NodeSnapshot s) {
            Map<String, IpSet> out = new HashMap<>();
            for (IpSet set : s.getIpSetsList()) {
                out.putIfAbsent(set.getId(), set);
            }
            return out;
        }
    }
}
