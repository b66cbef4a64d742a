// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.util.Map;

/**
 * One configuration in one round: sequential, 4-thread and 8-thread samples, packets queued per
 * connection, the CPU the queue's consumer process used meanwhile by thread name (empty for
 * configurations without one), and the sandbox's control plane's CPU (running beside the node here,
 * not on it in a cluster).
 */
record Measurement(
        Sample sequential,
        Sample parallel,
        Sample parallel8,
        double queuedPerConnection,
        Map<String, Long> consumerCpuNanos,
        long controlPlaneCpuNanos,
        int connections) {

    /** The consumer's CPU per connection, all its threads, in µs. */
    double consumerMicrosPerConnection() {
        return consumerCpuNanos.values().stream().mapToLong(Long::longValue).sum() / 1e3 / connections;
    }

    /** The sandbox control plane's CPU per connection, in µs. */
    double controlPlaneMicrosPerConnection() {
        return controlPlaneCpuNanos / 1e3 / connections;
    }

    /** One thread name's CPU per connection, in µs (0 if it used none). */
    double threadMicrosPerConnection(String thread) {
        return consumerCpuNanos.getOrDefault(thread, 0L) / 1e3 / connections;
    }
}
