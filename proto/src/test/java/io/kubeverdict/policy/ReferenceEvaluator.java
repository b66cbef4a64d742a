// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * policy.proto's comments, transcribed as directly as possible: lists walked per packet, sets
 * as strings. Slow on purpose; the yardstick for {@link SnapshotIndex}. Where the contract is
 * silent it takes the side of allowing less (unknown actions deny; a Deny or Pass rule with an
 * unusable part denies all, an Allow's unusable part matches nothing), as the index documents.
 */
final class ReferenceEvaluator {

    private final Map<String, Endpoint> endpointsByAddress = new HashMap<>();
    private final Map<String, IpSet> sets = new HashMap<>();
    private final Map<PolicyId, ActivePolicy> policies = new HashMap<>();
    /** "namespace/pod learned_set_id" -> canonical addresses that endpoint learned for the set. */
    private final Map<String, Set<String>> learned;

    ReferenceEvaluator(NodeSnapshot snapshot) {
        this(snapshot, Map.of());
    }

    ReferenceEvaluator(NodeSnapshot snapshot, Map<String, Set<String>> learned) {
        this.learned = learned;
        for (IpSet s : snapshot.getIpSetsList()) {
            sets.putIfAbsent(s.getId(), s);
        }
        for (ActivePolicy p : snapshot.getPoliciesList()) {
            policies.putIfAbsent(p.getId(), p);
        }
        for (Endpoint e : snapshot.getEndpointsList()) {
            for (String ip : e.getEndpoint().getIpsList()) {
                IpAddress a = IpAddress.tryParse(ip);
                if (a != null) {
                    endpointsByAddress.putIfAbsent(a.toString(), e);
                }
            }
        }
    }

    boolean allowed(IpAddress src, IpAddress dst, int protocol, int port) {
        Endpoint source = endpointsByAddress.get(src.toString());
        Endpoint destination = endpointsByAddress.get(dst.toString());
        boolean allowed = true;
        if (source != null) {
            allowed &= direction(source, false, dst, dst, protocol, port);
        }
        if (destination != null) {
            allowed &= direction(destination, true, src, dst, protocol, port);
        }
        return allowed;
    }

    private boolean direction(
            Endpoint endpoint, boolean ingress, IpAddress remote, IpAddress dst, int protocol, int port) {
        for (TierInfo tier : endpoint.getEndpoint().getTiersList()) {
            List<String> names = ingress ? tier.getIngressPoliciesList() : tier.getEgressPoliciesList();
            if (names.isEmpty()) {
                continue;
            }
            Action decided = null;
            search:
            for (String name : names) {
                ActivePolicy policy = policies.get(PolicyId.newBuilder()
                        .setTier(tier.getName())
                        .setName(name)
                        .build());
                if (policy == null) {
                    continue;
                }
                for (Rule rule : ingress
                        ? policy.getPolicy().getInboundRulesList()
                        : policy.getPolicy().getOutboundRulesList()) {
                    if (rule.getAction() != Action.ALLOW && hasUnusablePart(rule, ingress)) {
                        decided = Action.DENY; // a Deny or Pass that cannot be read whole denies all
                        break search;
                    }
                    if (peersMatch(rule, remote, ingress ? null : endpoint) && portsMatch(rule, dst, protocol, port)) {
                        decided = rule.getAction();
                        break search;
                    }
                }
            }
            Action action = decided != null ? decided : tier.getDefaultAction();
            if (action == Action.PASS) {
                continue;
            }
            return action == Action.ALLOW;
        }
        return true;
    }

    /** A peer or port clause this evaluator cannot use (in an Allow it matches nothing). */
    private boolean hasUnusablePart(Rule rule, boolean ingress) {
        for (Peer peer : rule.getPeersList()) {
            boolean usable = switch (peer.getKindCase()) {
                case IP_SET_ID -> hasType(peer.getIpSetId(), IpSetType.IP);
                case IP_BLOCK ->
                    Cidr.tryParse(peer.getIpBlock().getCidr()) != null
                            && peer.getIpBlock().getExceptList().stream().allMatch(e -> Cidr.tryParse(e) != null);
                case DOMAIN_NAMES ->
                    !ingress
                            && !peer.getDomainNames().getLearnedSetId().isEmpty()
                            && peer.getDomainNames().getPatternsCount() > 0;
                default -> false;
            };
            if (!usable) {
                return true;
            }
        }
        for (PortMatch pm : rule.getPortsList()) {
            if (!pm.getNamedPortIpSetId().isEmpty()) {
                if (!hasType(pm.getNamedPortIpSetId(), IpSetType.IP_AND_PORT)) {
                    return true;
                }
                continue;
            }
            Protocol p = pm.getProtocol();
            long from = Integer.toUnsignedLong(pm.getPort());
            long to = Integer.toUnsignedLong(pm.getEndPort());
            if ((p != Protocol.TCP && p != Protocol.UDP && p != Protocol.SCTP)
                    || from > 65535
                    || (from != 0 && to != 0 && to < from)) {
                return true;
            }
        }
        return false;
    }

    private boolean hasType(String setId, IpSetType type) {
        IpSet set = sets.get(setId);
        return set != null && set.getType() == type;
    }

    /** A domain-name peer matches only in egress (local = the source), by what local learned. */
    private boolean peersMatch(Rule rule, IpAddress remote, Endpoint local) {
        if (rule.getPeersCount() == 0) {
            return rule.getAllPeers();
        }
        for (Peer peer : rule.getPeersList()) {
            if (peer.hasIpBlock() && inBlock(peer.getIpBlock(), remote)) {
                return true;
            }
            if (peer.hasDomainNames()
                    && local != null
                    && !peer.getDomainNames().getLearnedSetId().isEmpty()
                    && peer.getDomainNames().getPatternsCount() > 0
                    && learned.getOrDefault(
                                    local.getId().getNamespace() + "/"
                                            + local.getId().getPod() + " "
                                            + peer.getDomainNames().getLearnedSetId(),
                                    Set.of())
                            .contains(remote.toString())) {
                return true;
            }
            if (!peer.getIpSetId().isEmpty()) {
                IpSet set = sets.get(peer.getIpSetId());
                if (set != null
                        && set.getType() == IpSetType.IP
                        && canonicalMembers(set).contains(remote.toString())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean inBlock(IpBlock block, IpAddress a) {
        Cidr cidr = Cidr.tryParse(block.getCidr());
        if (cidr == null) {
            return false;
        }
        boolean excepted = false;
        for (String e : block.getExceptList()) {
            Cidr except = Cidr.tryParse(e);
            if (except == null) {
                return false;
            }
            excepted |= inside(except, a);
        }
        return inside(cidr, a) && !excepted;
    }

    private static boolean inside(Cidr c, IpAddress a) {
        return c.family() == a.family()
                && RangeSet.compare(c.startHi(), c.startLo(), a.hi(), a.lo()) <= 0
                && RangeSet.compare(a.hi(), a.lo(), c.endHi(), c.endLo()) <= 0;
    }

    private boolean portsMatch(Rule rule, IpAddress dst, int protocol, int port) {
        if (rule.getPortsCount() == 0) {
            return true;
        }
        Protocol named = Protocol.forNumber(protocol);
        if (named != Protocol.TCP && named != Protocol.UDP && named != Protocol.SCTP) {
            return false;
        }
        for (PortMatch pm : rule.getPortsList()) {
            if (!pm.getNamedPortIpSetId().isEmpty()) {
                IpSet set = sets.get(pm.getNamedPortIpSetId());
                String name = named.name().toLowerCase(Locale.ROOT);
                if (set != null
                        && set.getType() == IpSetType.IP_AND_PORT
                        && canonicalMembers(set).contains(dst + "," + name + ":" + port)) {
                    return true;
                }
                continue;
            }
            if (pm.getProtocolValue() != protocol) {
                continue;
            }
            long from = Integer.toUnsignedLong(pm.getPort()); // uint32 on the wire
            long to = Integer.toUnsignedLong(pm.getEndPort());
            boolean inRange = from == 0 || (to == 0 ? port == from : port >= from && port <= to);
            if (inRange) {
                return true;
            }
        }
        return false;
    }

    private final Map<String, Set<String>> canonical = new HashMap<>();

    private Set<String> canonicalMembers(IpSet set) {
        return canonical.computeIfAbsent(set.getId(), id -> {
            Set<String> out = new HashSet<>();
            for (String m : set.getMembersList()) {
                int comma = m.indexOf(',');
                IpAddress a = IpAddress.tryParse(comma < 0 ? m : m.substring(0, comma));
                if (a != null) {
                    out.add(comma < 0 ? a.toString() : a + m.substring(comma).toLowerCase(Locale.ROOT));
                }
            }
            return out;
        });
    }
}
