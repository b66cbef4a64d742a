// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.DecisionText;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code kubeverdict_policy_verdicts_total{direction,verdict,reason,policy}}: first packets by what
 * decided them. {@code reason} is {@code rule} (then {@code policy} is the deciding policy,
 * {@code tier/namespace/name}), {@code tier_default} (then {@code policy} is the tier's name),
 * {@code not_isolated}, {@code every_tier_passed} or {@code no_endpoint} (no policy).
 *
 * <p>Bounded: only the first {@code maxPolicies} distinct policies that decide a packet get their
 * own series; later ones are counted as {@code policy="other"} (series are never dropped, so the
 * counters stay monotonic). 0 switches the meter off.
 *
 * <p>Hot path: {@link #record} is called on the verdict loop's thread for every packet. Counters
 * are resolved once per (generation, decision code) into an array indexed by the code, so a
 * packet costs an array read and an add; resolving allocates only the first time a code is seen.
 *
 * <p>{@code kubeverdict_policy_verdict_cache_keys_total}, same labels: the accepts among them whose
 * key the kernel's verdict cache took (docs/design/verdict-cache.md). The kernel's hits are counted
 * per family only (a hit never reaches the agent); this says which policies' keys they come from.
 */
public final class PolicyVerdictMetrics {
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxPolicies;
    private final Map<String, Counter> counters;
    private final Set<String> policies;

    // Verdict loop thread only.
    private EnforcedState cachedFor;
    private Counter[] byCode = new Counter[0];
    private Counter[] cachedByCode = new Counter[0];

    public PolicyVerdictMetrics(MeterRegistry registry, int maxPolicies) {
        if (maxPolicies < 0) {
            throw new IllegalArgumentException("maxPolicies must be >= 0, got " + maxPolicies);
        }
        this.registry = registry;
        this.maxPolicies = maxPolicies;
        this.counters = new ConcurrentHashMap<>();
        this.policies = ConcurrentHashMap.newKeySet();
    }

    private PolicyVerdictMetrics(PolicyVerdictMetrics shared) {
        this.registry = shared.registry;
        this.maxPolicies = shared.maxPolicies;
        this.counters = shared.counters;
        this.policies = shared.policies;
    }

    /**
     * The same series for one more verdict thread: its own per-generation cache (single-threaded),
     * the series and the bound on policies shared.
     */
    public PolicyVerdictMetrics forAnotherThread() {
        return new PolicyVerdictMetrics(this);
    }

    public boolean enabled() {
        return maxPolicies > 0;
    }

    /** Counts one packet decided by {@code state} (null: before the first InSync) with {@code code}. */
    public void record(EnforcedState state, int code) {
        record(state, code, false);
    }

    /** As {@link #record(EnforcedState, int)}; {@code keyCached}: the kernel's verdict cache took the packet's key. */
    public void record(EnforcedState state, int code, boolean keyCached) {
        if (maxPolicies == 0 || state == null || code < 0) {
            return;
        }
        if (state != cachedFor) {
            cachedFor = state;
            byCode = new Counter[64];
            cachedByCode = new Counter[64];
        }
        if (keyCached) {
            Counter[] cached = cachedByCode;
            if (code >= cached.length) {
                cached = cachedByCode = Arrays.copyOf(cached, Math.max(code + 1, cached.length * 2));
            }
            Counter c = cached[code];
            if (c == null) {
                c = cached[code] = resolve(state.index(), code, CACHE_KEYS);
            }
            c.increment();
        }
        Counter[] cache = byCode;
        if (code >= cache.length) {
            cache = byCode = Arrays.copyOf(cache, Math.max(code + 1, cache.length * 2));
        }
        Counter c = cache[code];
        if (c == null) {
            c = cache[code] = resolve(state.index(), code, VERDICTS);
        }
        c.increment();
    }

    private static final String VERDICTS = "kubeverdict_policy_verdicts";
    private static final String CACHE_KEYS = "kubeverdict_policy_verdict_cache_keys";
    private static final String CACHE_HITS = "kubeverdict_policy_verdict_cache_hits";

    /**
     * {@code kubeverdict_policy_verdict_cache_hits_total}, same labels: the series for connections
     * the kernel's verdict cache accepted with keys that {@code code} decided under {@code state}
     * (counted from the keys' element counters, {@link CacheHitsByPolicy}); null when off.
     */
    public Counter cacheHits(EnforcedState state, int code) {
        return maxPolicies == 0 || code < 0 ? null : resolve(state.index(), code, CACHE_HITS);
    }

    private Counter resolve(SnapshotIndex index, int code, String meter) {
        String direction = Decision.index(code) == Decision.NO_ENDPOINT
                ? "none"
                : Decision.directionName(Decision.direction(code));
        String verdict = Decision.allowed(code) ? "allow" : "deny";
        String reason;
        String policy;
        DecisionText text = new DecisionText(index); // a new series only: not per packet
        PolicyId p = text.decidingPolicy(code);
        if (p != null) {
            reason = "rule";
            policy = bounded(p.getTier() + "/" + p.getName());
        } else {
            switch (Decision.index(code)) {
                case Decision.NO_ENDPOINT -> {
                    reason = "no_endpoint";
                    policy = "";
                }
                case Decision.NOT_ISOLATED -> {
                    reason = "not_isolated";
                    policy = "";
                }
                case Decision.PASSED_ALL_TIERS -> {
                    reason = "every_tier_passed";
                    policy = "";
                }
                default -> {
                    DirectionExplanation d = text.direction(code);
                    reason = "tier_default";
                    policy = d.getDecidingTier(); // tier names are the control plane's, a fixed few
                }
            }
        }
        String key = meter + '\0' + direction + '\0' + verdict + '\0' + reason + '\0' + policy;
        return counters.computeIfAbsent(
                key,
                k -> Counter.builder(meter)
                        .description(switch (meter) {
                                    case VERDICTS -> "First packets";
                                    case CACHE_KEYS ->
                                        "Accepted first packets whose key the kernel's verdict cache took";
                                    default ->
                                        "New connections the kernel's verdict cache accepted (read from its keys' "
                                                + "counters every few seconds)";
                                }
                                + " by what decided them: the deciding policy (the first " + maxPolicies
                                + " distinct ones; later ones count as other), or the tier default")
                        .tags("direction", direction, "verdict", verdict, "reason", reason, "policy", policy)
                        .register(registry));
    }

    /** The name itself while fewer than maxPolicies names are in use (or it already is), else "other". */
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
        return OTHER;
    }
}
