// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.StagedText;
import io.kubeverdict.proto.v1.PolicyId;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code kubeverdict_staged_verdicts_total{verdict,direction,policy,rule}}: first packets the staged
 * policies would decide otherwise than the enforced ones, by the staged policy the difference is
 * attributed to ({@code tier/namespace/name} or {@code tier/name}, its own id; "" when none is
 * listed) and the would-be deciding rule ("" for a tier default); {@code verdict} is
 * {@code would_deny} or {@code would_allow}. {@code kubeverdict_staged_errors_total}: staged
 * evaluations that threw (the enforced verdict stood).
 *
 * <p>Bounded like {@link PolicyVerdictMetrics}: the first {@code maxPolicies} distinct staged
 * policies get series, later ones count as {@code other}. Called on a verdict loop's thread for
 * differing packets only; counters are cached per (generation, would-be code) with the staged
 * policy they were resolved for, so a repeat costs the attribution (allocation-free) and an add.
 */
public final class StagedVerdictMetrics {
    private final MeterRegistry registry;
    private final int maxPolicies;
    private final Map<String, Counter> counters;
    private final Set<String> policies;
    private final Counter errors;

    // Verdict loop thread only.
    private EnforcedState cachedFor;
    private StagedText text;
    private Counter[] byCode = new Counter[0];
    private int[] policyOfCode = new int[0];

    public StagedVerdictMetrics(MeterRegistry registry, int maxPolicies) {
        this.registry = registry;
        this.maxPolicies = maxPolicies;
        this.counters = new ConcurrentHashMap<>();
        this.policies = ConcurrentHashMap.newKeySet();
        this.errors = Counter.builder("kubeverdict_staged_errors")
                .description("Staged evaluations that failed; the enforced verdict stood")
                .register(registry);
    }

    private StagedVerdictMetrics(StagedVerdictMetrics shared) {
        this.registry = shared.registry;
        this.maxPolicies = shared.maxPolicies;
        this.counters = shared.counters;
        this.policies = shared.policies;
        this.errors = shared.errors;
    }

    /** The same series for one more verdict thread (its own cache). */
    public StagedVerdictMetrics forAnotherThread() {
        return new StagedVerdictMetrics(this);
    }

    /** A staged evaluation threw. */
    public void failed() {
        errors.increment();
    }

    public double failures() {
        return errors.count();
    }

    /** Counts a packet {@code state} decided otherwise with its staged policies: {@code stagedCode}. */
    public void record(EnforcedState state, int stagedCode, PacketTuple packet) {
        if (state == null || stagedCode < 0) {
            return;
        }
        if (state != cachedFor) {
            cachedFor = state;
            text = new StagedText(state.index());
            byCode = new Counter[64];
            policyOfCode = new int[64];
        }
        if (stagedCode >= byCode.length) {
            int size = Math.max(stagedCode + 1, byCode.length * 2);
            byCode = Arrays.copyOf(byCode, size);
            policyOfCode = Arrays.copyOf(policyOfCode, size);
        }
        int policy = text.attributedPolicy(stagedCode, packet);
        Counter c = byCode[stagedCode];
        if (c == null || policyOfCode[stagedCode] != policy) {
            c = byCode[stagedCode] = resolve(stagedCode, policy);
            policyOfCode[stagedCode] = policy;
        }
        c.increment();
    }

    private Counter resolve(int stagedCode, int policyNumber) {
        String verdict = Decision.allowed(stagedCode) ? "would_allow" : "would_deny";
        String direction = Decision.directionName(Decision.direction(stagedCode));
        String policy = "";
        if (policyNumber >= 0) {
            PolicyId own = StagedText.ownId(text.policy(policyNumber));
            policy = bounded(own.getTier() + "/" + own.getName());
        }
        String rule = text.ruleId(stagedCode);
        String key = verdict + '\0' + direction + '\0' + policy + '\0' + rule;
        String policyTag = policy;
        return counters.computeIfAbsent(
                key,
                k -> Counter.builder("kubeverdict_staged_verdicts")
                        .description("First packets the staged policies would decide otherwise, by staged policy"
                                + " (the first " + maxPolicies + " distinct ones; later ones count as other) and rule")
                        .tags("verdict", verdict, "direction", direction, "policy", policyTag, "rule", rule)
                        .register(registry));
    }

    private String bounded(String name) {
        if (policies.contains(name)) {
            return name;
        }
        synchronized (policies) {
            if (policies.size() < maxPolicies) {
                policies.add(name);
                return name;
            }
        }
        return PolicyVerdictMetrics.OTHER;
    }
}
