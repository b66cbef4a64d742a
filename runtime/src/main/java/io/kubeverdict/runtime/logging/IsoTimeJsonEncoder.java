// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.time.Instant;
import java.time.ZoneId;

/**
 * logback's own JSON encoder with the fields an operator reads ({@code timestamp} in epoch
 * milliseconds, level, thread, logger, formatted message, throwable, MDC and key-value pairs) and
 * one more, {@code time}: the same instant as ISO-8601 with date and zone offset, for people and
 * for log shippers that do not parse epoch numbers.
 */
public final class IsoTimeJsonEncoder extends JsonEncoder {
    private final ZoneId zone;

    public IsoTimeJsonEncoder() {
        this(ZoneId.systemDefault());
    }

    IsoTimeJsonEncoder(ZoneId zone) {
        this.zone = zone;
        setWithSequenceNumber(false);
        setWithNanoseconds(false);
        setWithContext(false);
        setWithMessage(false);
        setWithArguments(false);
        setWithFormattedMessage(true);
    }

    @Override
    protected void appendCustomFields(StringBuilder sb, ILoggingEvent event) {
        sb.append(',');
        appenderMember(
                sb,
                "time",
                TextEncoder.TIME.format(
                        Instant.ofEpochMilli(event.getTimeStamp()).atZone(zone)));
    }
}
