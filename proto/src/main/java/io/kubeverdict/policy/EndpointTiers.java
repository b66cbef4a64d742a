// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The endpoint phase of a compile: endpoints numbered in snapshot order, their addresses, their
 * tier lists per direction (tier default, name, policies) and the domain sets they watch. Reads
 * the rule phase only for policies by id and the domain sets the rules numbered, so it is redone
 * alone when endpoints change (a few hundred on a node: cheap). Immutable once built.
 */
final class EndpointTiers {

    /** One local address and the endpoint that holds it (the first in snapshot order). */
    record LocalAddress(int family, long hi, long lo, int endpoint) {}

    final EndpointId[] endpointIds;
    final List<LocalAddress> addresses;
    // [endpoint * 2 + direction] -> range of tiers that list policies for that direction
    final int[] epTierStart;
    final int[] epTierEnd;
    // [endpoint * 2 + direction] -> range of its would-be tiers (WorkloadEndpoint.staged_tiers),
    // after every live range; the live range itself where the would-be tiers of that direction are the live ones.
    final int[] epStagedStart;
    final int[] epStagedEnd;
    /** [endpoint * 2 + direction]: whether the slot's would-be tiers differ from its live ones. */
    final boolean[] slotStaged;

    final boolean anyStaged;
    final int[] tierDefault;
    final int[] tierName;
    final int[] tierPolStart;
    final int[] tierPolEnd;
    final int[] tierPolicies;
    final String[] tierNames;
    final int[][] epWatches;
    /** The rules' domain sets followed by those only watches name. */
    final String[] domainSetIds;

    final List<List<String>> domainPatterns;
    final ProblemList problems;

    private EndpointTiers(Builder b) {
        endpointIds = b.endpointIds.toArray(new EndpointId[0]);
        addresses = List.copyOf(b.addresses);
        epTierStart = b.epTierStart;
        epTierEnd = b.epTierEnd;
        epStagedStart = b.epStagedStart;
        epStagedEnd = b.epStagedEnd;
        slotStaged = b.slotStaged;
        boolean any = false;
        for (boolean staged : slotStaged) {
            any |= staged;
        }
        anyStaged = any;
        tierDefault = b.tierDefault.toArray();
        tierName = b.tierName.toArray();
        tierPolStart = b.tierPolStart.toArray();
        tierPolEnd = b.tierPolEnd.toArray();
        tierPolicies = b.tierPolicies.toArray();
        tierNames = b.tierNameIndex.keySet().toArray(new String[0]);
        epWatches = b.epWatches.toArray(new int[0][]);
        domainSetIds = b.domainSets.ids.toArray(new String[0]);
        domainPatterns = List.copyOf(b.domainSets.patterns);
        problems = b.problems;
    }

    static EndpointTiers compile(List<Endpoint> endpoints, CompiledRules rules) {
        Builder b = new Builder(rules, endpoints.size());
        for (Endpoint endpoint : endpoints) {
            b.addEndpoint(endpoint);
        }
        return new EndpointTiers(b);
    }

    private static final class Builder {
        private final CompiledRules rules;
        final ProblemList problems = new ProblemList();
        final DomainSets domainSets;
        final List<EndpointId> endpointIds = new ArrayList<>();
        final List<LocalAddress> addresses = new ArrayList<>();
        private final Map<IpAddress, Integer> owner = new HashMap<>();
        final int[] epTierStart;
        final int[] epTierEnd;
        final int[] epStagedStart;
        final int[] epStagedEnd;
        final boolean[] slotStaged;
        final List<int[]> epWatches = new ArrayList<>();
        final IntList tierDefault = new IntList();
        final IntList tierName = new IntList();
        final IntList tierPolStart = new IntList();
        final IntList tierPolEnd = new IntList();
        final IntList tierPolicies = new IntList();
        final Map<String, Integer> tierNameIndex = new LinkedHashMap<>();

        Builder(CompiledRules rules, int endpoints) {
            this.rules = rules;
            this.domainSets = rules.domainSets.copy();
            epTierStart = new int[endpoints * 2];
            epTierEnd = new int[endpoints * 2];
            epStagedStart = new int[endpoints * 2];
            epStagedEnd = new int[endpoints * 2];
            slotStaged = new boolean[endpoints * 2];
        }

        void addEndpoint(Endpoint endpoint) {
            int index = endpointIds.size();
            endpointIds.add(endpoint.getId());
            String who =
                    endpoint.getId().getNamespace() + "/" + endpoint.getId().getPod();
            for (String ip : endpoint.getEndpoint().getIpsList()) {
                IpAddress a = IpAddress.tryParse(ip);
                if (a == null) {
                    problems.add("endpoint " + who + ": invalid address \"" + ip + "\" skipped");
                    continue;
                }
                Integer first = owner.putIfAbsent(a, index);
                if (first != null) {
                    EndpointId other = endpointIds.get(first);
                    problems.add("endpoint " + who + ": address " + a + " already belongs to " + other.getNamespace()
                            + "/" + other.getPod() + "; the first is used");
                    continue;
                }
                addresses.add(new LocalAddress(a.family(), a.hi(), a.lo(), index));
            }
            IntList watches = new IntList();
            for (DomainNames watch : endpoint.getEndpoint().getDomainWatchesList()) {
                int d = domainSets.number("endpoint " + who, watch, problems);
                if (d >= 0 && !watches.contains(d)) {
                    watches.add(d);
                }
            }
            epWatches.add(watches.toArray());
            for (int direction : new int[] {Decision.EGRESS, Decision.INGRESS}) {
                epTierStart[index * 2 + direction] = tierDefault.size();
                addTiers(who, endpoint.getEndpoint().getTiersList(), direction);
                epTierEnd[index * 2 + direction] = tierDefault.size();
            }
            // The would-be tiers after the live ones, so the live ranges (and their programs) stay as they are;
            // a direction whose would-be tiers are its live ones keeps its live range, and the fused decision
            // reuses its live result (StagedDecision).
            List<TierInfo> staged = endpoint.getEndpoint().getStagedTiersList();
            List<TierInfo> live = endpoint.getEndpoint().getTiersList();
            for (int direction : new int[] {Decision.EGRESS, Decision.INGRESS}) {
                int slot = index * 2 + direction;
                slotStaged[slot] = !staged.isEmpty() && !view(staged, direction).equals(view(live, direction));
                epStagedStart[slot] = slotStaged[slot] ? tierDefault.size() : epTierStart[slot];
                if (slotStaged[slot]) {
                    addTiers(who + " (staged)", staged, direction);
                }
                epStagedEnd[slot] = slotStaged[slot] ? tierDefault.size() : epTierEnd[slot];
            }
        }

        /** What a direction's walk reads of a tier list: the tiers listing policies for it, in order. */
        private static List<TierView> view(List<TierInfo> tiers, int direction) {
            List<TierView> view = new ArrayList<>();
            for (TierInfo tier : tiers) {
                List<String> names =
                        direction == Decision.EGRESS ? tier.getEgressPoliciesList() : tier.getIngressPoliciesList();
                if (!names.isEmpty()) {
                    view.add(new TierView(tier.getName(), tier.getDefaultActionValue(), names));
                }
            }
            return view;
        }

        private record TierView(String name, int defaultAction, List<String> policies) {}

        /** The tiers of one direction that list policies, appended to the tier arrays. */
        private void addTiers(String who, List<TierInfo> tiers, int direction) {
            for (TierInfo tier : tiers) {
                List<String> names =
                        direction == Decision.EGRESS ? tier.getEgressPoliciesList() : tier.getIngressPoliciesList();
                if (names.isEmpty()) {
                    continue; // a tier with no policies for the direction is skipped
                }
                int def = switch (tier.getDefaultAction()) {
                    case ALLOW -> SnapshotCompiler.ACTION_ALLOW;
                    case DENY -> SnapshotCompiler.ACTION_DENY;
                    case PASS -> SnapshotCompiler.ACTION_PASS;
                    default -> {
                        problems.add("endpoint " + who + " tier " + tier.getName() + ": default action "
                                + tier.getDefaultAction() + " treated as DENY");
                        yield SnapshotCompiler.ACTION_DENY;
                    }
                };
                tierDefault.add(def);
                tierName.add(tierNameIndex.computeIfAbsent(tier.getName(), n -> tierNameIndex.size()));
                tierPolStart.add(tierPolicies.size());
                for (String name : names) {
                    int policy = rules.policy(tier.getName(), name);
                    if (policy < 0) {
                        problems.add("endpoint " + who + " tier " + tier.getName() + ": policy " + name
                                + " is missing; its rules match nothing");
                    }
                    tierPolicies.add(policy);
                }
                tierPolEnd.add(tierPolicies.size());
            }
        }
    }
}
