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
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

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
    /**
     * @param maxStreams open streaming calls per caller (an agent needs two: Sync and
     *     ReportVerdicts, and briefly a third while it reconnects)
     * @param unaryPerSecond sustained rate-limited calls per caller and second
     * @param unaryBurst calls a caller may make at once after being quiet
     * @param maxTrackedCallers buckets kept; beyond them, idle ones are forgotten, then new
     *     callers share one bucket (an address-per-call flood cannot grow the map)
     */
    public record Config(
            int maxStreams, double unaryPerSecond, int unaryBurst, int maxTrackedCallers, boolean limitLoopback) {
        public Config {
            // !(x > 0) also refuses NaN, which would make every comparison false: no limit at all.
            if (maxStreams < 2 || !(unaryPerSecond > 0) || unaryBurst < 1 || maxTrackedCallers < 1) {
                throw new IllegalArgumentException(
                        "call limits must allow an agent's two streams and some calls: " + this);
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
    private final Map<String, Integer> openStreams = new ConcurrentHashMap<>();
    private final CallerBuckets buckets;
    private final CallRefusals refusals;

    public CallLimits(
            Config config,
            Function<ServerCall<?, ?>, String> callerKey,
            Predicate<MethodDescriptor<?, ?>> rateLimited,
            MeterRegistry registry,
            LongSupplier nanoClock) {
        this.config = config;
        this.callerKey = callerKey;
        this.rateLimited = rateLimited;
        this.refusals = new CallRefusals(registry);
        this.buckets =
                new CallerBuckets(config.unaryPerSecond(), config.unaryBurst(), config.maxTrackedCallers(), nanoClock);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (!config.limitLoopback()
                && BearerTokenInterceptor.onLoopback(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))) {
            return next.startCall(call, headers); // the operator through kubectl port-forward, or this pod itself
        }
        MethodDescriptor<Q, R> method = call.getMethodDescriptor();
        String caller = callerKey.apply(call);
        if (!method.getType().clientSendsOneMessage() || !method.getType().serverSendsOneMessage()) {
            return stream(call, headers, next, caller);
        }
        if (rateLimited.test(method) && !buckets.tryTake(caller)) {
            return refusals.refuse(
                    call,
                    "rate_limited",
                    Status.Code.RESOURCE_EXHAUSTED,
                    caller,
                    "more than " + config.unaryPerSecond() + " calls per second (burst " + config.unaryBurst() + ")");
        }
        return next.startCall(call, headers);
    }

    private <Q, R> ServerCall.Listener<Q> stream(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next, String caller) {
        int open = openStreams.merge(caller, 1, Integer::sum);
        if (open > config.maxStreams()) {
            release(caller);
            return refusals.refuse(
                    call,
                    "streams_per_caller",
                    Status.Code.RESOURCE_EXHAUSTED,
                    caller,
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
}
