// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import ch.qos.logback.classic.Level;
import io.kubeverdict.runtime.logging.LogFormat;
import io.kubeverdict.runtime.logging.Logging;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code --log-level} and {@code --log-format} of a long-running process; {@link #apply()} at start. */
public final class LoggingOptions {
    @Option(
            names = "--log-level",
            paramLabel = "LEVEL",
            converter = LevelConverter.class,
            defaultValue = "${sys:kubeverdict.log.level:-INFO}",
            description = "error, warn, info, debug or trace (default ${DEFAULT-VALUE}); libraries (gRPC, fabric8, "
                    + "netty) log at warn unless debug or trace is asked for.")
    Level level = Level.INFO;

    @Option(
            names = "--log-format",
            paramLabel = "text|json",
            defaultValue = "text",
            description =
                    "text: one line per event with date, time and zone; json: one JSON object per line "
                            + "(logback's JSON encoder; timestamp in epoch ms plus an ISO-8601 time). Default: ${DEFAULT-VALUE}.")
    LogFormat format = LogFormat.text;

    public Level level() {
        return level;
    }

    public LogFormat format() {
        return format;
    }

    /** Configures logging of this process; call before anything logs. */
    public void apply() {
        Logging.configure(level, format);
    }

    /** Level names in any case; refuses what logback would silently turn into DEBUG. */
    public static final class LevelConverter implements ITypeConverter<Level> {
        @Override
        public Level convert(String value) {
            String v = value.toUpperCase(Locale.ROOT);
            return switch (v) {
                case "ERROR", "WARN", "INFO", "DEBUG", "TRACE" -> Level.toLevel(v);
                default ->
                    throw new TypeConversionException(
                            "expected error, warn, info, debug or trace, got '" + value + "'");
            };
        }
    }
}
