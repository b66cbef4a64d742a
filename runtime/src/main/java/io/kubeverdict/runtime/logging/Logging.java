// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Map;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Configures logback for a process from its command line: one appender on stderr (so exactly one
 * line per event), the root level, and the
 * chatty libraries held at WARN unless the level asks for more detail than that. Records of
 * java.util.logging (gRPC logs there) go through the same appender, in the same format.
 */
public final class Logging {
    private static final Map<String, Level> LIBRARIES = Map.of(
            "io.grpc",
            Level.WARN,
            "io.fabric8",
            Level.WARN,
            "io.vertx",
            Level.WARN,
            "io.netty",
            Level.WARN,
            "okhttp3",
            Level.WARN);

    private Logging() {}

    /** Replaces the whole configuration (idempotent). */
    public static void configure(Level level, LogFormat format) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return; // another SLF4J binding: its own configuration rules
        }
        configure(context, level, format);
    }

    /** The same on a given context (also logback's own initialisation: {@link DefaultConfigurator}). */
    static void configure(LoggerContext context, Level level, LogFormat format) {
        context.reset();
        // java.util.logging (gRPC's) into the same appender; the propagator keeps JUL's levels in
        // step so that disabled JUL records cost nothing.
        LevelChangePropagator propagator = new LevelChangePropagator();
        propagator.setContext(context);
        propagator.setResetJUL(true);
        propagator.start();
        context.addListener(propagator);
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
        Encoder<ILoggingEvent> encoder = encoder(context, format);
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(level);
        root.addAppender(stderr);
        for (Map.Entry<String, Level> library : LIBRARIES.entrySet()) {
            // DEBUG/TRACE for everything when asked for; otherwise the libraries only warn.
            Level quiet = level.isGreaterOrEqual(Level.INFO) ? library.getValue() : level;
            context.getLogger(library.getKey()).setLevel(quiet);
        }
    }

    private static Encoder<ILoggingEvent> encoder(LoggerContext context, LogFormat format) {
        if (format == LogFormat.json) {
            IsoTimeJsonEncoder json = new IsoTimeJsonEncoder();
            json.setContext(context);
            json.start();
            return json;
        }
        TextEncoder text = new TextEncoder();
        text.setContext(context);
        text.start();
        return text;
    }
}
