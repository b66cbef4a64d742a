// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A duration as kubectl writes it ({@code 60s}, {@code 1m30s}, {@code 500ms}, {@code 2h}) or ISO-8601 ({@code PT1M}). */
final class DurationText implements ITypeConverter<Duration> {
    private static final Pattern PART = Pattern.compile("(\\d+)(ms|h|m|s)");

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    static Duration parse(String text) {
        String t = text.strip();
        if (t.toUpperCase(Locale.ROOT).startsWith("P")) {
            try {
                return Duration.parse(t);
            } catch (RuntimeException e) {
                throw new TypeConversionException("'" + text + "' is no duration (e.g. 60s, 1m30s, PT1M)");
            }
        }
        Matcher m = PART.matcher(t);
        Duration d = Duration.ZERO;
        int at = 0;
        while (m.find() && m.start() == at) {
            long n = Long.parseLong(m.group(1));
            d = d.plus(
                    switch (m.group(2)) {
                        case "ms" -> Duration.ofMillis(n);
                        case "s" -> Duration.ofSeconds(n);
                        case "m" -> Duration.ofMinutes(n);
                        default -> Duration.ofHours(n);
                    });
            at = m.end();
        }
        if (at == 0 || at != t.length()) {
            throw new TypeConversionException("'" + text + "' is no duration (e.g. 60s, 1m30s, PT1M)");
        }
        return d;
    }
}
