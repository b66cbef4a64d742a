// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The one converter of every duration option: as Go and kubectl write them ({@code 5s},
 * {@code 2m}, {@code 1h30m}, {@code 1.5s}, {@code 500ms}, {@code 250us}, {@code 0}) or ISO-8601
 * ({@code PT1M}). Negative durations are refused: no option here means one.
 */
public final class DurationText implements ITypeConverter<Duration> {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|h|m|s)");
    private static final String EXAMPLES = "e.g. 5s, 2m, 1h30m, 500ms or ISO-8601 PT1M";

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    /** The duration {@code text} names; a {@link TypeConversionException} saying why not. */
    public static Duration parse(String text) {
        String t = text.strip();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        if (t.toUpperCase(Locale.ROOT).startsWith("P")) {
            try {
                return nonNegative(text, Duration.parse(t));
            } catch (DateTimeParseException e) {
                throw invalid(text);
            }
        }
        Matcher m = PART.matcher(t);
        BigDecimal nanos = BigDecimal.ZERO;
        int at = 0;
        while (at < t.length() && m.find(at) && m.start() == at) {
            nanos = nanos.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(nanosOf(m.group(2)))));
            at = m.end();
        }
        if (at == 0 || at != t.length()) {
            throw invalid(text);
        }
        if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new TypeConversionException("'" + text + "' is too long a duration (at most 2562047h)");
        }
        return Duration.ofNanos(nanos.longValue()); // a fraction of a nanosecond is dropped, as Go does
    }

    /** For options that took whole seconds before: a bare number still means seconds. */
    public static final class OrSeconds implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String text) {
            return text.strip().matches("\\d{1,12}") ? Duration.ofSeconds(Long.parseLong(text.strip())) : parse(text);
        }
    }

    /** For options that took milliseconds before: a bare number still means milliseconds. */
    public static final class OrMillis implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String text) {
            return text.strip().matches("\\d{1,15}") ? Duration.ofMillis(Long.parseLong(text.strip())) : parse(text);
        }
    }

    private static long nanosOf(String unit) {
        return switch (unit) {
            case "ns" -> 1L;
            case "us", "µs", "μs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            default -> 3_600_000_000_000L;
        };
    }

    private static Duration nonNegative(String text, Duration d) {
        if (d.isNegative()) {
            throw new TypeConversionException("'" + text + "' is negative: want a duration of at least 0");
        }
        return d;
    }

    private static TypeConversionException invalid(String text) {
        return new TypeConversionException("'" + text + "' is no duration (" + EXAMPLES + ")");
    }
}
