// SPDX-License-Identifier: Apache-2.0
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

    IndexNames(EndpointId[] endpoints, String[] tiers, PolicyId[] policies, int[] rulePolicy, String[] ruleIds) {
        this.endpoints = endpoints;
        this.tiers = tiers;
        this.policies = policies;
        this.rulePolicy = rulePolicy;
        this.ruleIds = ruleIds;
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

    int policyNumberOfRule(int rule) {
        return rulePolicy[rule];
    }

    PolicyId policy(int policy) {
        return policies[policy];
    }

    String ruleId(int rule) {
        return ruleIds[rule];
    }
}
