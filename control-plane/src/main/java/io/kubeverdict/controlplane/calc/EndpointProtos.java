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
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/** A pod's {@link Endpoint} proto with its tiers, for {@link NodeSnapshots} (which caches them per pod). */
final class EndpointProtos {
    /** A would-be tier list with no policy in any direction (policy.proto, staged_tiers). */
    private static final TierInfo NOTHING_LISTED = TierInfo.newBuilder()
            .setName(PolicyCompiler.TIER)
            .setDefaultAction(Action.DENY)
            .build();

    private final ClusterIndex index;

    EndpointProtos(ClusterIndex index) {
        this.index = index;
    }

    /** The pod's endpoint: addresses, labels, and its selecting policies' tiers (and would-be tiers when some are staged). */
    Endpoint endpoint(PodModel pod, TreeSet<String> policyKeys) {
        WorkloadEndpoint.Builder we =
                WorkloadEndpoint.newBuilder().addAllIps(pod.ips()).putAllLabels(new TreeMap<>(pod.labels()));
        if (policyKeys != null) {
            List<PolicyState> live = new ArrayList<>();
            List<PolicyState> staged = new ArrayList<>();
            boolean replaced = false;
            for (String k : policyKeys) {
                PolicyState p = index.policy(k);
                (p.staged() ? staged : live).add(p);
                replaced |= !p.staged() && index.replacedWhenStaged(k);
            }
            we.addAllTiers(tiers(live));
            addDomainWatches(we, live);
            if (!staged.isEmpty() || replaced) {
                // The would-be tiers: live policies not replaced by a staged one, and the staged ones.
                List<PolicyState> wouldBe = new ArrayList<>(staged);
                for (PolicyState p : live) {
                    if (!index.replacedWhenStaged(p.key)) {
                        wouldBe.add(p);
                    }
                }
                List<TierInfo> wouldBeTiers = tiers(wouldBe);
                // None left (a replacement took the only one away): one tier listing nothing says "not isolated".
                we.addAllStagedTiers(wouldBeTiers.isEmpty() ? List.of(NOTHING_LISTED) : wouldBeTiers);
            }
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(pod.namespace()).setPod(pod.name()))
                .setEndpoint(we)
                .build();
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
    private static void addDomainWatches(WorkloadEndpoint.Builder we, List<PolicyState> live) {
        TreeMap<String, DomainNames> watches = new TreeMap<>();
        for (PolicyState p : live) {
            if (p.admin == null) {
                continue;
            }
            for (DomainNames d : p.admin.domainWatches()) {
                watches.putIfAbsent(d.getLearnedSetId(), d);
            }
        }
        we.addAllDomainWatches(watches.values());
    }

    private static void addTier(List<TierInfo> tiers, TierInfo.Builder tier) {
        if (tier.getIngressPoliciesCount() > 0 || tier.getEgressPoliciesCount() > 0) {
            tiers.add(tier.build());
        }
    }
}
