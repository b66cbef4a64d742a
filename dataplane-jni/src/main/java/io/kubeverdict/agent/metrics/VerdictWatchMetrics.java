// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The agent's WatchVerdicts streams (inspection, on the node's loopback, which every hostNetwork
 * pod of the node shares): how many are open, and how many were refused at
 * {@link VerdictFeed#MAX_WATCH_STREAMS} (audit L7). The control plane's upload is not one of them.
 */
public final class VerdictWatchMetrics {
    private VerdictWatchMetrics() {}

    public static void register(MeterRegistry registry, VerdictFeed feed) {
        Gauge.builder("kubeverdict_agent_verdict_watch_streams", feed, VerdictFeed::watchStreams)
                .description("Open WatchVerdicts streams on the agent's inspection port (at most "
                        + VerdictFeed.MAX_WATCH_STREAMS + ")")
                .register(registry);
        FunctionCounter.builder("kubeverdict_agent_verdict_watch_refused", feed, VerdictFeed::watchStreamsRefused)
                .description("WatchVerdicts streams refused (RESOURCE_EXHAUSTED) because "
                        + VerdictFeed.MAX_WATCH_STREAMS + " were open")
                .register(registry);
    }
}
