// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kubeverdict.controlplane.calc.RefusedAddress;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Addresses the calculation will not use are said once each, when they appear and when they end. */
class AddressReportsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AddressReports reports = new AddressReports(new ControlPlaneMetrics(registry));
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(AddressReports.class);
    private Level level;

    @BeforeEach
    void capture() {
        lines.start();
        logger.addAppender(lines);
        level = logger.getLevel();
        logger.setLevel(Level.INFO);
    }

    @AfterEach
    void release() {
        logger.detachAppender(lines);
        logger.setLevel(level);
    }

    private List<String> logged() {
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    @Test
    void aConflictIsLoggedOnceWhileItLastsAndOnceWhenItEnds() {
        Map<String, List<String>> twin = Map.of("10.0.1.2", List.of("x/a", "x/twin"));
        reports.conflicts(twin);
        reports.conflicts(twin);
        assertThat(gauge("kubeverdict_pod_address_conflicts")).isEqualTo(1);
        reports.conflicts(Map.of());
        assertThat(logged())
                .containsExactly(
                        "address 10.0.1.2 is claimed by live pods [x/a, x/twin]: it is given to none of them until"
                                + " one claim ends",
                        "address 10.0.1.2 is claimed by one pod again");
        assertThat(gauge("kubeverdict_pod_address_conflicts")).isZero();
    }

    @Test
    void onlyNewlyRefusedAddressesAreLoggedWhateverTheirOrder() {
        RefusedAddress mirror = new RefusedAddress("shop/mirror", "node-3", "10.9.9.9");
        RefusedAddress other = new RefusedAddress("shop/other", "node-3", "10.9.9.8");
        reports.refused(List.of(mirror));
        reports.refused(List.of(other, mirror));
        reports.refused(List.of(mirror, other));
        assertThat(logged()).hasSize(2).allMatch(l -> l.contains("outside the node's pod ranges"));
        assertThat(gauge("kubeverdict_pod_addresses_refused")).isEqualTo(2);
        reports.refused(List.of());
        assertThat(gauge("kubeverdict_pod_addresses_refused")).isZero();
        assertThat(logged()).hasSize(2);
    }
}
