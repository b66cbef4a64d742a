// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.metrics;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The limits of every JDK HTTP server of the processes (the metrics endpoint, the console): slow
 * clients must not hold them (audit L7). The JDK server reads each request on an executor thread
 * and by default waits for its headers forever; here it gives up on a request whose headers have
 * not arrived within {@link #MAX_REQUEST_SECONDS} and on a response not taken within {@link
 * #MAX_RESPONSE_SECONDS} (the JDK server's own {@code sun.net.httpserver.maxReqTime}/{@code
 * maxRspTime}, unless the JVM was started with them; read once, for the whole JVM; this class must
 * be loaded before the Prometheus exporter's HTTPServer, which sets its own when none are), and requests
 * are served by {@link #THREADS} threads with a queue instead of a hand-off, so the accepting
 * thread never waits.
 */
public final class HttpLimits {
    public static final int THREADS = 32;
    public static final long MAX_REQUEST_SECONDS = 5;
    public static final long MAX_RESPONSE_SECONDS = 30;

    static {
        // Read when the JVM makes its first com.sun.net.httpserver server: every server of the
        // processes takes its executor from here first, so this runs before it.
        defaultProperty("sun.net.httpserver.maxReqTime", MAX_REQUEST_SECONDS);
        defaultProperty("sun.net.httpserver.maxRspTime", MAX_RESPONSE_SECONDS);
    }

    private HttpLimits() {}

    private static void defaultProperty(String name, long seconds) {
        if (System.getProperty(name) == null) {
            System.setProperty(name, Long.toString(seconds));
        }
    }

    /** Threads made as needed up to {@link #THREADS}, idle ones let go; beyond them a queue (the server's close shuts it down). */
    public static ExecutorService executor(String threadPrefix) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, threadPrefix + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
