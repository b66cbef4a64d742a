package io.kubeverdict.runtime.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The logging of every kube-verdict process until its log options apply, and of the command-line
 * tools: {@link Logging#configure} with text on stderr at {@code -Dkubeverdict.log.level} (default
 * INFO). Found by logback through the service loader before any configuration file and final, so
 * logback's XML configurator and an XML parser are never loaded: they were a fifth of the classes
 * a process loads before its first log line (bin/bench-startup).
 */
public final class DefaultConfigurator extends ContextAwareBase implements Configurator {
    public static final String LEVEL_PROPERTY = "kubeverdict.log.level";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        Logging.configure(context, Level.toLevel(System.getProperty(LEVEL_PROPERTY), Level.INFO), LogFormat.text);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
