// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.Status;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Refused calls are logged (finding L1), but a flood of them is not a flood of lines, and the node
 * a client names cannot forge or bloat a line: it is escaped and cut.
 */
class NodeAuthorizerLogTest {
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final List<Logger> loggers = List.of((Logger) LoggerFactory.getLogger(NodeAuthorizer.class), (Logger)
            LoggerFactory.getLogger("io.kubeverdict.controlplane.auth.RefusalLog"));

    @BeforeEach
    void capture() {
        lines.start();
        loggers.forEach(l -> l.addAppender(lines));
    }

    @AfterEach
    void release() {
        loggers.forEach(l -> l.detachAppender(lines));
    }

    private List<String> logged() {
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void twoHundredRefusalsOfOneCallerAreOneLineAndTheNodeNameIsEscapedAndCut() {
        NodeAuthorizer tokens = NodeAuthorizer.requireAgentToken();
        String forged = "n1\n2026-01-01T00:00:00Z INFO  [main] forged line\u001b[31m" + "x".repeat(16 * 1024);
        for (int i = 0; i < 200; i++) {
            Status s = tokens.authorize(forged);
            assertThat(s.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        }
        assertThat(logged()).hasSize(1);
        String line = logged().get(0);
        assertThat(line).doesNotContain("\n").doesNotContain("\u001b").contains("n1\\n2026-01-01");
        assertThat(line.length()).as("bounded, whatever the client sent").isLessThan(1024);
    }
}
