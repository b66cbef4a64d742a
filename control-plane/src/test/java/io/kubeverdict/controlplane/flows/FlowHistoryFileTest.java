// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kubeverdict.proto.v1.FlowHistoryState;
import io.kubeverdict.proto.v1.Verdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class FlowHistoryFileTest {
    @TempDir
    Path dir;

    @Test
    void whatIsWrittenIsReadBack() throws Exception {
        FlowHistory h =
                new FlowHistory(new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 10, 1 << 20));
        h.record(FlowHistoryTest.seen(FlowHistoryTest.key("a", "b", 80, Verdict.VERDICT_DENY), 1_000), 1_000);
        FlowHistoryFile f = new FlowHistoryFile(dir.resolve("sub/flows.pb"));
        f.write(h.held());
        assertThat(f.read()).isEqualTo(h.held());
        try (var files = Files.list(dir.resolve("sub"))) {
            assertThat(files).containsExactly(dir.resolve("sub/flows.pb")); // no temporary file left
        }
    }

    @Test
    void aCorruptFileIsIgnoredWithALogNamingIt() throws Exception {
        Path p = dir.resolve("flows.pb");
        Files.write(p, new byte[] {(byte) 0xff, 0x01, 0x02});
        assertThat(readLogging(p)).contains(p.toString()).contains("corrupt");
    }

    @Test
    void aFileOfAnotherFormatIsIgnored() throws Exception {
        Path p = dir.resolve("flows.pb");
        Files.write(p, FlowHistoryState.newBuilder().setFormat(9).build().toByteArray());
        assertThat(readLogging(p)).contains(p.toString());
    }

    @Test
    void aRecordThatIsNoRecordMakesTheWholeFileIgnored() throws Exception {
        Path p = dir.resolve("flows.pb");
        Files.write(
                p,
                FlowHistoryState.newBuilder()
                        .setFormat(1)
                        .addRecords(
                                io.kubeverdict.proto.v1.FlowRecord.newBuilder().setCount(1))
                        .build()
                        .toByteArray());
        assertThat(readLogging(p)).contains("corrupt");
    }

    @Test
    void noFileIsAnEmptyHistoryWithoutComplaint() {
        assertThat(new FlowHistoryFile(dir.resolve("none.pb")).read()).isEmpty();
    }

    private static String readLogging(Path p) {
        Logger logger = (Logger) LoggerFactory.getLogger(FlowHistoryFile.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            assertThat(new FlowHistoryFile(p).read()).isEmpty();
            assertThat(appender.list).hasSize(1);
            return appender.list.get(0).getFormattedMessage();
        } finally {
            logger.detachAppender(appender);
        }
    }
}
