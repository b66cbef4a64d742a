// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;

/** The text line is the one logback's pattern wrote before: same bytes for the same event. */
class TextEncoderTest {
    private static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n";

    private final LoggerContext context = new LoggerContext();

    private String pattern(LoggingEvent event, ZoneId zone) {
        TimeZone before = TimeZone.getDefault();
        TimeZone.setDefault(TimeZone.getTimeZone(zone));
        try {
            PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(context);
            encoder.setPattern(PATTERN);
            encoder.start();
            return new String(encoder.encode(event), StandardCharsets.UTF_8);
        } finally {
            TimeZone.setDefault(before);
        }
    }

    private static String text(LoggingEvent event, ZoneId zone) {
        TextEncoder encoder = new TextEncoder(zone);
        encoder.start();
        return new String(encoder.encode(event), StandardCharsets.UTF_8);
    }

    private LoggingEvent event(String logger, Level level, String message, Throwable thrown, Object... args) {
        LoggingEvent event = new LoggingEvent("x", context.getLogger(logger), level, message, thrown, args);
        event.setThreadName("grpc-default-worker-ELG-3-1");
        event.setTimeStamp(1_796_385_911_951L);
        return event;
    }

    @Test
    void writesWhatThePatternWrote() {
        for (ZoneId zone : new ZoneId[] {ZoneId.of("UTC"), ZoneId.of("Asia/Kolkata"), ZoneId.of("America/St_Johns")}) {
            for (Level level : new Level[] {Level.ERROR, Level.WARN, Level.INFO, Level.DEBUG, Level.TRACE}) {
                LoggingEvent shortName = event("Main", level, "peer {} is gone after {} ms", null, "n1", 42);
                assertThat(text(shortName, zone)).isEqualTo(pattern(shortName, zone));
                LoggingEvent longName = event(
                        "io.kubeverdict.controlplane.service.GrpcEndpointWithAVeryLongName",
                        level,
                        "plain ünïcode line",
                        null);
                assertThat(text(longName, zone)).isEqualTo(pattern(longName, zone));
            }
        }
    }

    @Test
    void aThrowableFollowsOnTheLinesBelowAsThePatternWroteIt() {
        Exception cause = new IllegalStateException("inner");
        Exception thrown = new RuntimeException("outer", cause);
        thrown.addSuppressed(new IllegalArgumentException("also"));
        LoggingEvent event = event("io.kubeverdict.agent.run.Agent", Level.ERROR, "failed: {}", thrown, "x");
        String line = text(event, ZoneId.of("UTC"));
        assertThat(line).isEqualTo(pattern(event, ZoneId.of("UTC")));
        assertThat(line)
                .contains(
                        "failed: x",
                        "java.lang.RuntimeException: outer",
                        "Caused by: java.lang.IllegalStateException: inner",
                        "Suppressed: java.lang.IllegalArgumentException: also");
    }
}
