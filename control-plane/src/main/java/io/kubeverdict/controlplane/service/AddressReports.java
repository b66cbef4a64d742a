// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.calc.RefusedAddress;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says what changed in the pod addresses the calculation would not use: addresses claimed by several
 * live pods (given to none of them) and addresses outside a node's pod ranges (refused). Each new
 * one is logged once, a resolved conflict once, and the gauges follow the current counts. Event
 * thread only.
 */
final class AddressReports {
    private static final Logger log = LoggerFactory.getLogger(AddressReports.class);

    private final ControlPlaneMetrics metrics;
    private Map<String, List<String>> lastConflicts = Map.of();
    private Set<RefusedAddress> lastRefused = Set.of();

    AddressReports(ControlPlaneMetrics metrics) {
        this.metrics = metrics;
    }

    void conflicts(Map<String, List<String>> conflicts) {
        if (conflicts.equals(lastConflicts)) {
            return;
        }
        conflicts.forEach((address, pods) -> {
            if (!pods.equals(lastConflicts.get(address))) {
                log.warn(
                        "address {} is claimed by live pods {}: it is given to none of them until one claim ends",
                        address,
                        pods);
            }
        });
        lastConflicts.keySet().stream()
                .filter(a -> !conflicts.containsKey(a))
                .forEach(a -> log.info("address {} is claimed by one pod again", a));
        lastConflicts = Map.copyOf(conflicts);
        metrics.addressConflicts(conflicts.size());
    }

    void refused(List<RefusedAddress> refused) {
        Set<RefusedAddress> now = Set.copyOf(refused);
        if (now.equals(lastRefused)) {
            return;
        }
        now.stream()
                .filter(r -> !lastRefused.contains(r))
                .sorted()
                .forEach(r -> log.warn(
                        "pod {} on node {} reports address {}, outside the node's pod ranges and not its own: refused "
                                + "(left out of every set and endpoint)",
                        r.pod(),
                        r.node(),
                        r.address()));
        lastRefused = now;
        metrics.refusedAddresses(now.size());
    }
}
