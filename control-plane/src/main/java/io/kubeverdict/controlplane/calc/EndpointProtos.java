// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A pod's {@link Endpoint} proto with its tiers, for {@link NodeSnapshots} (which caches them per pod). */
final class EndpointProtos {
    /** A would-be tier list with no policy in any direction (policy.proto, staged_tiers). */
    private static final TierInfo NOTHING_LISTED = TierInfo.newBuilder()
            .setName(PolicyCompiler.TIER)
            .setDefaultAction(Action.DENY)
            .build();

    private final ClusterIndex index;

    /** What a pod's selecting policies give its endpoint: a function of those policies alone. */
    private record Tiers(List<TierInfo> tiers, List<DomainNames> domainWatches, List<TierInfo> wouldBe) {}

    /**
     * Tiers by combination of selecting policies, so that the pods selected by the same policies
     * (thousands share each combination) share their messages; valid until a policy changes.
     */
    private final Map<List<String>, Tiers> byPolicies = new HashMap<>();

    private long policyChanges = -1;

    EndpointProtos(ClusterIndex index) {
        this.index = index;
    }

    /** The pod's endpoint: addresses, labels, and its selecting policies' tiers (and would-be tiers when some are staged). */
    Endpoint endpoint(PodModel pod, List<String> policyKeys) {
        WorkloadEndpoint.Builder we =
                WorkloadEndpoint.newBuilder().addAllIps(pod.ips()).putAllLabels(new TreeMap<>(pod.labels()));
        if (policyKeys != null) {
            Tiers t = tiersOf(policyKeys);
            we.addAllTiers(t.tiers()).addAllDomainWatches(t.domainWatches());
            if (t.wouldBe() != null) {
                we.addAllStagedTiers(t.wouldBe());
            }
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(pod.namespace()).setPod(pod.name()))
                .setEndpoint(we)
                .build();
    }

    private Tiers tiersOf(List<String> policyKeys) {
        // Kept combinations no pod holds any more are dropped with the rest now and then.
        if (policyChanges != index.policyChanges() || byPolicies.size() > 4096 + 2 * index.selectionCombinations()) {
            byPolicies.clear();
            policyChanges = index.policyChanges();
        }
        Tiers t = byPolicies.get(policyKeys);
        if (t == null) {
            t = tiersFor(policyKeys);
            byPolicies.put(policyKeys, t);
        }
        return t;
    }

    private Tiers tiersFor(List<String> policyKeys) {
        List<PolicyState> live = new ArrayList<>();
        List<PolicyState> staged = new ArrayList<>();
        boolean replaced = false;
        for (String k : policyKeys) {
            PolicyState p = index.policy(k);
            (p.staged() ? staged : live).add(p);
            replaced |= !p.staged() && index.replacedWhenStaged(k);
        }
        List<TierInfo> wouldBeTiers = null;
        if (!staged.isEmpty() || replaced) {
            // The would-be tiers: live policies not replaced by a staged one, and the staged ones.
            List<PolicyState> wouldBe = new ArrayList<>(staged);
            for (PolicyState p : live) {
                if (!index.replacedWhenStaged(p.key)) {
                    wouldBe.add(p);
                }
            }
            wouldBeTiers = tiers(wouldBe);
            // None left (a replacement took the only one away): one tier listing nothing says "not isolated".
            if (wouldBeTiers.isEmpty()) {
                wouldBeTiers = List.of(NOTHING_LISTED);
            }
        }
        return new Tiers(tiers(live), domainWatches(live), wouldBeTiers);
    }

    /**
     * The tiers of a pod's selecting policies in evaluation order: admin (admin-tier policies by
     * priority, name, kind; default PASS: admin rules do not isolate), then the NetworkPolicy
     * tier "default" (by name; default DENY for the directions they isolate), then baseline
     * (default ALLOW). A tier is listed when some policy of it is listed in a direction; an
     * admin-tier policy is listed only in the directions it has rules for.
     */
    private static List<TierInfo> tiers(List<PolicyState> policies) {
        List<PolicyState> admin = new ArrayList<>();
        List<PolicyState> baseline = new ArrayList<>();
        List<PolicyState> networkPolicies = new ArrayList<>();
        for (PolicyState p : policies) {
            (p.admin == null ? networkPolicies : p.admin.tier() == AdminPolicy.Tier.ADMIN ? admin : baseline).add(p);
        }
        networkPolicies.sort(Comparator.comparing(p -> p.proto().getId().getName()));
        List<TierInfo> out = new ArrayList<>(3);
        addTier(out, adminTier(AdminPolicyCompiler.ADMIN_TIER, Action.PASS, admin));
        addTier(
                out,
                listed(
                        TierInfo.newBuilder().setName(PolicyCompiler.TIER).setDefaultAction(Action.DENY),
                        networkPolicies));
        addTier(out, adminTier(AdminPolicyCompiler.BASELINE_TIER, Action.ALLOW, baseline));
        return out;
    }

    private static TierInfo.Builder adminTier(String name, Action defaultAction, List<PolicyState> policies) {
        policies.sort((a, b) -> CompiledAdminPolicy.ORDER.compare(a.admin, b.admin));
        return listed(TierInfo.newBuilder().setName(name).setDefaultAction(defaultAction), policies);
    }

    /** The policies listed in a tier, by their names as sent, in the directions they apply to. */
    private static TierInfo.Builder listed(TierInfo.Builder tier, List<PolicyState> policies) {
        for (PolicyState p : policies) {
            String policyName = p.proto().getId().getName();
            if (p.ingress()) {
                tier.addIngressPolicies(policyName);
            }
            if (p.egress()) {
                tier.addEgressPolicies(policyName);
            }
        }
        return tier;
    }

    /**
     * The domainNames peers of the endpoint's live admin-tier egress rules, distinct, by learned-set
     * id. Staged policies add no watch: watching changes what the node does with DNS answers.
     */
    private static List<DomainNames> domainWatches(List<PolicyState> live) {
        TreeMap<String, DomainNames> watches = new TreeMap<>();
        for (PolicyState p : live) {
            if (p.admin == null) {
                continue;
            }
            for (DomainNames d : p.admin.domainWatches()) {
                watches.putIfAbsent(d.getLearnedSetId(), d);
            }
        }
        return List.copyOf(watches.values());
    }

    private static void addTier(List<TierInfo> tiers, TierInfo.Builder tier) {
        if (tier.getIngressPoliciesCount() > 0 || tier.getEgressPoliciesCount() > 0) {
            tiers.add(tier.build());
        }
    }
}
