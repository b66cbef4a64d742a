// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.runtime.metrics.Histograms;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The DNS path's meters: responses by outcome, answers seen, addresses learned, learned set sizes,
 * and how long a response was held in the agent (from its batch's arrival to the verdict).
 */
public final class DnsMetrics {
    private DnsMetrics() {}

    /** Registers the meters; returns what the loop tells each response's hold time. */
    public static LongConsumer register(MeterRegistry registry, DnsLearner learner, LearnedAddressBook book) {
        for (int o = 0; o < DnsLearner.OUTCOMES.length; o++) {
            int outcome = o;
            FunctionCounter.builder("kubeverdict_dns_responses", learner, l -> l.count(outcome))
                    .description("DNS packets to (answers) and from (queries) pods with domain-name rules, by what "
                            + "came of them (all were accepted unchanged)")
                    .tag("outcome", DnsLearner.outcome(o))
                    .register(registry);
        }
        FunctionCounter.builder("kubeverdict_dns_answers", learner, DnsLearner::answersSeen)
                .description("Answer records in DNS responses to pods with domain-name rules")
                .register(registry);
        FunctionCounter.builder("kubeverdict_dns_addresses_learned", learner, DnsLearner::addressesLearned)
                .description("Addresses new to a pod's learned set")
                .register(registry);
        Gauge.builder("kubeverdict_dns_learned_addresses", book, LearnedAddressBook::size)
                .description("Addresses pods have learned and that have not been swept (expired ones leave within 1 s)")
                .register(registry);
        FunctionCounter.builder("kubeverdict_dns_queries_evicted", learner, DnsLearner::queryPodEvictions)
                .description("Recorded queries pushed out before their answer: the pod had too many in flight")
                .tag("limit", "pod")
                .register(registry);
        FunctionCounter.builder("kubeverdict_dns_queries_evicted", learner, DnsLearner::queryNodeEvictions)
                .description("Recorded queries pushed out before their answer: the pod had too many in flight")
                .tag("limit", "node")
                .register(registry);
        FunctionCounter.builder("kubeverdict_dns_learned_evictions", book.budget(), LearnedSet.Budget::evictions)
                .description("Learned addresses evicted (oldest-expiring first) to make room in a full set, or on a "
                        + "full node")
                .register(registry);
        FunctionCounter.builder("kubeverdict_dns_learned_rejections", book.budget(), LearnedSet.Budget::rejections)
                .description("Addresses not learned: the node's limit was reached and the pod's set was empty")
                .register(registry);
        Gauge.builder("kubeverdict_dns_learned_sets", book, LearnedAddressBook::setCount)
                .description("(pod, domain set) pairs watched")
                .register(registry);
        // Explicit buckets: the agent's registry turns percentile histograms off
        // (Histograms.ONLY_EXPLICIT_BUCKETS), which left this timer with count, sum and max only.
        Timer hold = Histograms.timer(
                registry,
                "kubeverdict_dns_response_hold",
                "How long the agent held a DNS response before accepting it (learning included)",
                1e-6,
                2e-6,
                5e-6,
                10e-6,
                20e-6,
                50e-6,
                100e-6,
                200e-6,
                500e-6,
                1e-3,
                5e-3,
                20e-3,
                100e-3);
        return nanos -> hold.record(nanos, TimeUnit.NANOSECONDS);
    }
}
