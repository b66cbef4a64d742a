// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Status;
import io.kubeverdict.runtime.logging.LogLimiter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of calls an authorizer refused. Anyone who can connect can make refusals, so they are
 * logged at most once a minute per peer address and status code, the next line saying how many
 * were not; and what the client wrote (the node it names, which the refusal's text may repeat) is
 * shown escaped to printable ASCII and cut, so it can neither forge log lines nor bloat them.
 */
final class RefusalLog {
    /** Under NodeAuthorizer's name: the logger operators already filter on. */
    private static final Logger log = LoggerFactory.getLogger(NodeAuthorizer.class);
    /** More than a DNS subdomain (253): a real node name is never cut. */
    static final int MAX_SHOWN_CHARS = 256;

    private static final int MAX_TRACKED = 1_000;

    private final Map<String, LogLimiter> limiters = new ConcurrentHashMap<>();
    private final LogLimiter overflow = perMinute();

    void refused(String node, Status status) {
        String peer = PeerIdentityInterceptor.ADDRESS.get();
        String who = peer == null ? "an unknown peer" : peer;
        long suppressed = limiter(who + " " + status.getCode()).tryAcquire();
        if (suppressed < 0) {
            return;
        }
        log.warn(
                "refused a call for node '{}' from {}: {}{}",
                printable(node),
                who,
                printable(status.getDescription()),
                suppressed > 0 ? " (" + suppressed + " more such refusals of this peer not logged)" : "");
    }

    private LogLimiter limiter(String key) {
        LogLimiter l = limiters.get(key);
        if (l != null) {
            return l;
        }
        if (limiters.size() >= MAX_TRACKED) {
            return overflow; // an address-per-call flood shares one line a minute
        }
        return limiters.computeIfAbsent(key, k -> perMinute());
    }

    private static LogLimiter perMinute() {
        return new LogLimiter(1, TimeUnit.MINUTES);
    }

    /** {@code s} with anything but printable ASCII escaped, cut after {@link #MAX_SHOWN_CHARS}. */
    static String printable(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_SHOWN_CHARS) + 16);
        int i = 0;
        for (; i < s.length() && b.length() < MAX_SHOWN_CHARS; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c >= 0x20 && c < 0x7f) {
                        b.append(c);
                    } else {
                        b.append(String.format("\\u%04x", (int) c));
                    }
                }
            }
        }
        if (i < s.length()) {
            b.append("...(").append(s.length() - i).append(" more chars)");
        }
        return b.toString();
    }
}
