// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.runtime.metrics.ProcessMetrics;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

class DnsMetricsTest {
    @Test
    void theHoldTimeHasBucketsInTheAgentsRegistry() {
        // the agent's registry, whose filter turns Micrometer's percentile histograms off
        try (ProcessMetrics process = new ProcessMetrics("agent")) {
            assertHoldBuckets(process);
        }
    }

    private static void assertHoldBuckets(ProcessMetrics process) {
        LongConsumer hold = DnsMetrics.register(
                process.registry(), new DnsLearner(1, 10, DnsResolvers.none()), new LearnedAddressBook());
        hold.accept(15_000);
        hold.accept(40_000);
        hold.accept(3_000_000);

        String text = process.registry().scrape();
        assertThat(text).contains("kubeverdict_dns_response_hold_seconds_bucket{le=\"1.0E-5\"} 0");
        assertThat(text).contains("kubeverdict_dns_response_hold_seconds_bucket{le=\"2.0E-5\"} 1");
        assertThat(text).contains("kubeverdict_dns_response_hold_seconds_bucket{le=\"5.0E-5\"} 2");
        assertThat(text).contains("kubeverdict_dns_response_hold_seconds_bucket{le=\"0.005\"} 3");
        assertThat(text).contains("kubeverdict_dns_response_hold_seconds_count 3");
    }
}
