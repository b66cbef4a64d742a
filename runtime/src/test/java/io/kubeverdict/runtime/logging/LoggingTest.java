// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.kubeverdict.runtime.cli.LoggingOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class LoggingTest {
    private static final Logger log = LoggerFactory.getLogger("io.kubeverdict.test.Component");
    private static final String ISO_TIME = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}(Z|[+-]\\d{2}:\\d{2})";

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private PrintStream original;

    @BeforeEach
    void captureStderr() {
        original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(original);
        Logging.configure(Level.INFO, LogFormat.text);
    }

    private List<String> lines() {
        System.err.flush();
        return captured.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void textIsOneLinePerEventWithDateTimeAndZone() {
        Logging.configure(Level.INFO, LogFormat.text);
        Logging.configure(Level.INFO, LogFormat.text); // configuring twice must not double the lines
        log.warn("peer {} is gone", "n1");
        log.debug("not at info");
        assertThat(lines()).hasSize(1);
        assertThat(lines().get(0))
                .matches(ISO_TIME + " WARN  \\[main\\] io\\.kubeverdict\\.test\\.Component - peer n1 is gone");
    }

    @Test
    void jsonIsOneObjectPerLineWithTheFormattedMessageAndAnIsoTime() {
        Logging.configure(Level.DEBUG, LogFormat.json);
        log.debug("applied {} in {} ms", 42, 7);
        log.error("with \"quotes\"", new IllegalStateException("boom"));
        List<String> lines = lines();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .startsWith("{")
                .endsWith("}")
                .contains(
                        "\"level\":\"DEBUG\"",
                        "\"loggerName\":\"io.kubeverdict.test.Component\"",
                        "\"formattedMessage\":\"applied 42 in 7 ms\"",
                        "\"timestamp\":")
                .doesNotContain("\"message\":", "\"sequenceNumber\"");
        assertThat(lines.get(0)).containsPattern("\"time\":\"" + ISO_TIME + "\"\\}$");
        assertThat(lines.get(1))
                .contains("\"formattedMessage\":\"with \\\"quotes\\\"\"", "IllegalStateException", "boom");
    }

    @Test
    void librariesOnlyWarnUnlessDetailIsAskedFor() {
        Logger grpc = LoggerFactory.getLogger("io.grpc.netty.Something");
        Logging.configure(Level.INFO, LogFormat.text);
        grpc.info("chatter");
        grpc.warn("trouble");
        assertThat(lines()).hasSize(1).allSatisfy(l -> assertThat(l).endsWith("trouble"));
        Logging.configure(Level.DEBUG, LogFormat.text);
        grpc.debug("detail");
        assertThat(lines()).hasSize(2);
    }

    @Test
    void theDefaultConfigurationIsTheRuntimesConfiguratorAndNoFile() throws Exception {
        var resources = java.util.Collections.list(getClass().getClassLoader().getResources("logback.xml"));
        assertThat(resources)
                .as("a configuration file would be ignored: the configurator comes first")
                .isEmpty();
        ch.qos.logback.classic.LoggerContext context = new ch.qos.logback.classic.LoggerContext();
        new ch.qos.logback.classic.util.ContextInitializer(context).autoConfig();
        assertThat(new ch.qos.logback.core.status.StatusUtil(context).getHighestLevel(0))
                .as(context.getStatusManager().getCopyOfStatusList().toString())
                .isLessThan(ch.qos.logback.core.status.Status.WARN);
        assertThat(context.getLogger("ROOT").getLevel()).isEqualTo(Level.INFO);
        assertThat(context.getLogger("io.grpc").getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getLogger("ROOT").getAppender("STDERR"))
                .as("configured by DefaultConfigurator")
                .isNotNull();
    }

    @Test
    void javaUtilLoggingOfLibrariesComesOutInTheSameFormat() {
        Logging.configure(Level.INFO, LogFormat.json);
        java.util.logging.Logger.getLogger("io.grpc.internal.SerializingExecutor")
                .severe("runnable failed");
        java.util.logging.Logger.getLogger("io.grpc.internal.Other").info("chatter");
        assertThat(lines()).hasSize(1);
        assertThat(lines().get(0))
                .startsWith("{")
                .contains("\"level\":\"ERROR\"", "\"formattedMessage\":\"runnable failed\"");
    }

    @Command(name = "demo")
    static final class Demo implements Runnable {
        @Mixin
        LoggingOptions logging = new LoggingOptions();

        @Override
        public void run() {}
    }

    @Test
    void optionsParseLevelsInAnyCaseAndRefuseOthers() {
        Demo demo = new Demo();
        new CommandLine(demo).parseArgs("--log-level", "Debug", "--log-format", "json");
        assertThat(demo.logging.level()).isEqualTo(Level.DEBUG);
        assertThat(demo.logging.format()).isEqualTo(LogFormat.json);
        Demo defaults = new Demo();
        new CommandLine(defaults).parseArgs();
        assertThat(defaults.logging.level()).isEqualTo(Level.INFO);
        assertThat(defaults.logging.format()).isEqualTo(LogFormat.text);
        assertThatThrownBy(() -> new CommandLine(new Demo()).parseArgs("--log-level", "verbose"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("verbose");
        assertThatThrownBy(() -> new CommandLine(new Demo()).parseArgs("--log-format", "xml"))
                .isInstanceOf(CommandLine.ParameterException.class);
    }

    @Test
    void limiterLogsTheFirstThenOncePerIntervalCountingTheRest() {
        AtomicLong now = new AtomicLong(1_000);
        LogLimiter limiter = new LogLimiter(60, TimeUnit.SECONDS, now::get);
        assertThat(limiter.tryAcquire()).isZero();
        now.addAndGet(TimeUnit.SECONDS.toNanos(10));
        assertThat(limiter.tryAcquire()).isEqualTo(-1);
        assertThat(limiter.tryAcquire()).isEqualTo(-1);
        now.addAndGet(TimeUnit.SECONDS.toNanos(50));
        assertThat(limiter.tryAcquire()).as("suppressed since the last line").isEqualTo(2);
        assertThat(limiter.tryAcquire()).isEqualTo(-1);
        limiter.reset();
        assertThat(limiter.tryAcquire())
                .as("after a reset the next one is logged")
                .isZero();
    }
}
