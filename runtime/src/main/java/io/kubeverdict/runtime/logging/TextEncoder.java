// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import ch.qos.logback.classic.pattern.TargetLengthBasedClassNameAbbreviator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/**
 * The text log line: {@code 2026-12-04T11:25:11.951Z WARN  [main] i.k.c.service.GrpcEndpoint - message},
 * then the stack trace of a throwable, if any, on the lines below; what logback's pattern
 * {@code %d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n} writes. Written
 * here rather than with logback's PatternLayout, whose parser and converters (instantiated by
 * reflection) were ~30 ms of each process's start, before its first log line.
 */
final class TextEncoder extends EncoderBase<ILoggingEvent> {
    /** Date, time to the millisecond and zone offset: the text line's first field and JSON's "time". */
    static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");

    private static final int LOGGER_LENGTH = 36;

    private final ZoneId zone;
    private final TargetLengthBasedClassNameAbbreviator abbreviator =
            new TargetLengthBasedClassNameAbbreviator(LOGGER_LENGTH);

    TextEncoder() {
        this(ZoneId.systemDefault());
    }

    TextEncoder(ZoneId zone) {
        this.zone = zone;
    }

    @Override
    public byte[] headerBytes() {
        return null;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        StringBuilder line = new StringBuilder(128);
        TIME.formatTo(Instant.ofEpochMilli(event.getTimeStamp()).atZone(zone), line);
        String level = event.getLevel().toString();
        line.append(' ').append(level);
        for (int pad = level.length(); pad < 5; pad++) {
            line.append(' ');
        }
        line.append(" [")
                .append(event.getThreadName())
                .append("] ")
                .append(abbreviator.abbreviate(event.getLoggerName()))
                .append(" - ")
                .append(event.getFormattedMessage())
                .append(CoreConstants.LINE_SEPARATOR);
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown != null) {
            line.append(ThrowableProxyUtil.asString(thrown)); // ends with a line separator
        }
        return line.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public byte[] footerBytes() {
        return null;
    }
}
