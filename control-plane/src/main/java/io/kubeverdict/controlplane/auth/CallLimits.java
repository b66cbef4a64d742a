// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.kubeverdict.runtime.logging.LogLimiter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one caller may hold: at most {@code maxStreams} open streams (Sync, ReportVerdicts,
 * ObserveVerdicts) and, for the unary calls {@code rateLimited} picks (inspection), a token
 * bucket. The caller is who the call's credentials say ({@link CallerKey}), so one node's agent
 * or one user cannot crowd out the others; over a limit the call ends RESOURCE_EXHAUSTED, counted
 * by reason and method (never by caller: those names come from clients) and logged, limited to
 * one line per reason and second. Agents' ReportApplied is not rate-limited: they send one per
 * applied change. Callers on loopback are not limited: they are the operator through
 * {@code kubectl port-forward} (authorized by the API server, and allowed to read every node
 * anyway) or this pod itself, and the live CLI's {@code matrix} asks for every node's snapshot.
 */
public final class CallLimits implements ServerInterceptor {
    private static final Logger log = LoggerFactory.getLogger(CallLimits.class);

    /**
     * @param maxStreams open streaming calls per caller (an agent needs two: Sync and
     *     ReportVerdicts, and briefly a third while it reconnects)
     * @param unaryPerSecond sustained rate-limited calls per caller and second
     * @param unaryBurst calls a caller may make at once after being quiet
     * @param maxTrackedCallers buckets kept; beyond them, idle ones are forgotten, then new
     *     callers share one bucket (an address-per-call flood cannot grow the map)
     */
    public record Config(int maxStreams, double unaryPerSecond, int unaryBurst, int maxTrackedCallers,
            boolean limitLoopback) {
        public Config {
            // !(x > 0) also refuses NaN, which would make every comparison false: no limit at all.
            if (maxStreams < 2 || !(unaryPerSecond > 0) || unaryBurst < 1 || maxTrackedCallers < 1) {
                throw new IllegalArgumentException("call limits must allow an agent's two streams and some calls: "
                        + this);
            }
        }

        /** Loopback callers not limited. */
        public Config(int maxStreams, double unaryPerSecond, int unaryBurst, int maxTrackedCallers) {
            this(maxStreams, unaryPerSecond, unaryBurst, maxTrackedCallers, false);
        }

        public static Config defaults() {
            return new Config(4, 20, 40, 10_000);
        }

        /** Loopback callers limited like everyone else (tests, whose clients all come from loopback). */
        public Config limitingLoopback() {
            return new Config(maxStreams, unaryPerSecond, unaryBurst, maxTrackedCallers, true);
        }
    }

    private final Config config;
    private final Function<ServerCall<?, ?>, String> callerKey;
    private final Predicate<MethodDescriptor<?, ?>> rateLimited;
    private final LongSupplier nanoClock;
    private final MeterRegistry registry;
    private final Map<String, Integer> openStreams = new ConcurrentHashMap<>();
    private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();
    private final TokenBucket overflow;
    private final LogLimiter streamLog = new LogLimiter(1, TimeUnit.SECONDS);
    private final LogLimiter rateLog = new LogLimiter(1, TimeUnit.SECONDS);

    public CallLimits(Config config, Function<ServerCall<?, ?>, String> callerKey,
            Predicate<MethodDescriptor<?, ?>> rateLimited, MeterRegistry registry, LongSupplier nanoClock) {
        this.config = config;
        this.callerKey = callerKey;
        this.rateLimited = rateLimited;
        this.registry = registry;
        this.nanoClock = nanoClock;
        this.overflow = new TokenBucket(config, nanoClock.getAsLong());
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        if (!config.limitLoopback()
                && BearerTokenInterceptor.onLoopback(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))) {
            return next.startCall(call, headers); // the operator through kubectl port-forward, or this pod itself
        }
        MethodDescriptor<Q, R> method = call.getMethodDescriptor();
        String caller = callerKey.apply(call);
        if (!method.getType().clientSendsOneMessage() || !method.getType().serverSendsOneMessage()) {
            return stream(call, headers, next, caller);
        }
        if (rateLimited.test(method) && !bucket(caller).tryTake(nanoClock.getAsLong())) {
            return refuse(call, "rate_limited", rateLog, caller, "more than " + config.unaryPerSecond()
                    + " calls per second (burst " + config.unaryBurst() + ")");
        }
        return next.startCall(call, headers);
    }

    private <Q, R> ServerCall.Listener<Q> stream(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next, String caller) {
        int open = openStreams.merge(caller, 1, Integer::sum);
        if (open > config.maxStreams()) {
            release(caller);
            return refuse(call, "streams_per_caller", streamLog, caller,
                    "already " + config.maxStreams() + " open streams");
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable done = () -> {
            if (released.compareAndSet(false, true)) {
                release(caller);
            }
        };
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(call, headers);
        } catch (RuntimeException e) {
            done.run();
            throw e;
        }
        return new SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onComplete() {
                done.run();
                super.onComplete();
            }

            @Override
            public void onCancel() {
                done.run();
                super.onCancel();
            }
        };
    }

    private void release(String caller) {
        openStreams.computeIfPresent(caller, (k, n) -> n <= 1 ? null : n - 1);
    }

    /** Open streams of one caller (for tests and inspection). */
    public int openStreams(String caller) {
        return openStreams.getOrDefault(caller, 0);
    }

    private TokenBucket bucket(String caller) {
        TokenBucket b = buckets.get(caller);
        if (b != null) {
            return b;
        }
        if (buckets.size() >= config.maxTrackedCallers()) {
            long now = nanoClock.getAsLong();
            buckets.values().removeIf(bucket -> bucket.isFull(now));
            if (buckets.size() >= config.maxTrackedCallers()) {
                return overflow;
            }
        }
        return buckets.computeIfAbsent(caller, k -> new TokenBucket(config, nanoClock.getAsLong()));
    }

    private <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String reason, LogLimiter limiter,
            String caller, String why) {
        String method = call.getMethodDescriptor().getFullMethodName();
        Counter.builder("kubeverdict_grpc_calls_refused")
                .description("Calls refused by a per-caller limit, by reason and method")
                .tag("reason", reason).tag("method", method)
                .register(registry).increment();
        long suppressed = limiter.tryAcquire();
        if (suppressed >= 0) {
            log.warn("refused {} of {} from {}: {}{}", method, caller,
                    call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR), why,
                    suppressed > 0 ? " (" + suppressed + " more refusals not logged)" : "");
        }
        call.close(Status.RESOURCE_EXHAUSTED.withDescription(why + " for " + caller), new Metadata());
        return new ServerCall.Listener<>() { };
    }

    /** Tokens refill continuously up to the burst. */
    private static final class TokenBucket {
        private final double perNano;
        private final double burst;
        private double tokens;
        private long last;

        TokenBucket(Config config, long now) {
            this.perNano = config.unaryPerSecond() / 1e9;
            this.burst = config.unaryBurst();
            this.tokens = burst;
            this.last = now;
        }

        synchronized boolean tryTake(long now) {
            refill(now);
            if (tokens < 1) {
                return false;
            }
            tokens -= 1;
            return true;
        }

        synchronized boolean isFull(long now) {
            refill(now);
            return tokens >= burst;
        }

        private void refill(long now) {
            tokens = Math.min(burst, tokens + Math.max(0, now - last) * perNano);
            last = now;
        }
    }
}
