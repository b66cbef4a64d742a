// SPDX-License-Identifier: Apache-2.0
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
 * a process loads before its first log line (bin/bench-startup). A file given with
 * {@code -Dlogback.configurationFile}, or a test's logback-test.xml, is still read.
 */
public final class DefaultConfigurator extends ContextAwareBase implements Configurator {
    public static final String LEVEL_PROPERTY = "kubeverdict.log.level";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty("logback.configurationFile") != null
                || DefaultConfigurator.class.getClassLoader().getResource("logback-test.xml") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY; // a file asked for explicitly, or a test's: logback reads it
        }
        Logging.configure(context, Level.toLevel(System.getProperty(LEVEL_PROPERTY), Level.INFO), LogFormat.text);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
