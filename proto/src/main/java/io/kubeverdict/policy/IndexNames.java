package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.PolicyId;

/**
 * What the numbers of one {@link SnapshotIndex} stand for: endpoints, tier names, policies and
 * rules. The hot path never reads them; explanations do. Immutable.
 */
final class IndexNames {

    private final EndpointId[] endpoints;
    private final String[] tiers;
    private final PolicyId[] policies;
    private final int[] rulePolicy;
    private final String[] ruleIds;

    IndexNames(SnapshotCompiler c) {
        endpoints = c.endpointIds.toArray(new EndpointId[0]);
        tiers = c.tierNameIndex.keySet().toArray(new String[0]);
        policies = c.policyIds.toArray(new PolicyId[0]);
        rulePolicy = c.rulePolicy.toArray();
        ruleIds = c.ruleIds.toArray(new String[0]);
    }

    int endpointCount() {
        return endpoints.length;
    }

    EndpointId endpoint(int endpoint) {
        return endpoints[endpoint];
    }

    int tierCount() {
        return tiers.length;
    }

    String tier(int tierName) {
        return tiers[tierName];
    }

    int ruleCount() {
        return ruleIds.length;
    }

    PolicyId policyOfRule(int rule) {
        return policies[rulePolicy[rule]];
    }

    String ruleId(int rule) {
        return ruleIds[rule];
    }
}
