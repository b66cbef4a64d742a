// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import io.kubeverdict.controlplane.inspect.EndpointDirectory.Located;
import io.kubeverdict.controlplane.sync.IndexedSnapshot;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.SetMembership;
import io.kubeverdict.proto.v1.SetUse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * DescribeEndpoint over the published snapshots: a pod's tiers (what selects it), the IP sets its
 * addresses are members of and the rules that use each of those sets, with the sets' definitions
 * in words from the calculation (readable names instead of hashes).
 */
final class EndpointDescriber {
    private final SnapshotHub hub;
    private final Function<Collection<String>, Map<String, String>> setDescriptions;

    /** @param setDescriptions set id -> definition, for the ids asked (may leave ids out) */
    EndpointDescriber(SnapshotHub hub, Function<Collection<String>, Map<String, String>> setDescriptions) {
        this.hub = hub;
        this.setDescriptions = setDescriptions;
    }

    EndpointDescription describe(String pod) {
        List<IndexedSnapshot> snapshots = hub.all();
        Located located = new EndpointDirectory(snapshots)
                .byName(pod)
                .orElseThrow(() -> new IllegalArgumentException(
                        "no endpoint named '" + pod + "' (want namespace/pod of a running pod with an IP)"));
        List<String> ips = located.endpoint().getEndpoint().getIpsList();

        // Every set once (nodes share them), and every rule that uses each.
        Map<String, IpSet> sets = new TreeMap<>();
        Map<String, Map<String, SetUse>> uses = new LinkedHashMap<>();
        for (IndexedSnapshot s : snapshots) {
            s.ipSets().forEach(sets::putIfAbsent);
            for (ActivePolicy p : s.policies().values()) {
                collectUses(p, uses);
            }
        }
        Map<String, List<String>> memberships = new TreeMap<>();
        for (IpSet set : sets.values()) {
            List<String> mine = new ArrayList<>();
            for (String member : set.getMembersList()) {
                if (isOf(member, set.getType(), ips)) {
                    mine.add(member);
                }
            }
            if (!mine.isEmpty()) {
                memberships.put(set.getId(), mine);
            }
        }
        Map<String, String> words = memberships.isEmpty() ? Map.of() : setDescriptions.apply(memberships.keySet());

        EndpointDescription.Builder out = EndpointDescription.newBuilder()
                .setId(located.endpoint().getId())
                .setNode(located.node())
                .addAllIps(ips)
                .putAllLabels(located.endpoint().getEndpoint().getLabelsMap())
                .addAllTiers(located.endpoint().getEndpoint().getTiersList())
                .addAllDomainWatches(located.endpoint().getEndpoint().getDomainWatchesList());
        memberships.forEach((id, members) -> out.addMemberOf(SetMembership.newBuilder()
                .setIpSetId(id)
                .setDescription(words.getOrDefault(id, ""))
                .setType(sets.get(id).getType())
                .addAllMembers(members)
                .addAllUsedBy(uses.getOrDefault(id, Map.of()).values())));
        return out.build();
    }

    private static boolean isOf(String member, IpSetType type, List<String> ips) {
        if (type == IpSetType.IP_AND_PORT) {
            int comma = member.indexOf(',');
            return comma > 0 && ips.contains(member.substring(0, comma));
        }
        return ips.contains(member);
    }

    private static void collectUses(ActivePolicy p, Map<String, Map<String, SetUse>> uses) {
        rules(p, p.getPolicy().getInboundRulesList(), "ingress", uses);
        rules(p, p.getPolicy().getOutboundRulesList(), "egress", uses);
    }

    private static void rules(
            ActivePolicy p, List<Rule> rules, String direction, Map<String, Map<String, SetUse>> uses) {
        for (Rule r : rules) {
            for (Peer peer : r.getPeersList()) {
                if (peer.hasIpSetId()) {
                    use(uses, peer.getIpSetId(), p, r, direction, false);
                }
            }
            for (PortMatch port : r.getPortsList()) {
                if (!port.getNamedPortIpSetId().isEmpty()) {
                    use(uses, port.getNamedPortIpSetId(), p, r, direction, true);
                }
            }
        }
    }

    private static void use(
            Map<String, Map<String, SetUse>> uses,
            String set,
            ActivePolicy p,
            Rule r,
            String direction,
            boolean namedPort) {
        // Keyed so that a policy seen on several nodes, or a rule split per peer, is listed once.
        String key = p.getId().getTier() + "/" + p.getId().getName() + " " + r.getRuleId() + " " + direction + " "
                + namedPort;
        uses.computeIfAbsent(set, k -> new LinkedHashMap<>())
                .putIfAbsent(
                        key,
                        SetUse.newBuilder()
                                .setPolicy(p.getId())
                                .setRuleId(r.getRuleId())
                                .setDirection(direction)
                                .setNamedPort(namedPort)
                                .build());
    }
}
