// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.kubeverdict.runtime.logging.LogLimiter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a call that a limit refused, before any work is done for it: counted in
 * {@code kubeverdict_grpc_calls_refused_total{reason,method}} (never by caller: those names come
 * from clients) and logged at most once per second and reason, with how many were not.
 * {@code reason} is one of our own constants, so the counters and the limiters stay few.
 */
final class CallRefusals {
    private static final Logger log = LoggerFactory.getLogger(CallRefusals.class);

    private final MeterRegistry registry;
    private final Map<String, LogLimiter> logLimits = new ConcurrentHashMap<>();

    CallRefusals(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Closes {@code call} with {@code code} and "WHY for CALLER"; the listener ignores the rest. */
    <Q, R> ServerCall.Listener<Q> refuse(
            ServerCall<Q, R> call, String reason, Status.Code code, String caller, String why) {
        String method = call.getMethodDescriptor().getFullMethodName();
        Counter.builder("kubeverdict_grpc_calls_refused")
                .description("Calls refused by a limit before any work, by reason and method")
                .tag("reason", reason)
                .tag("method", method)
                .register(registry)
                .increment();
        long suppressed = logLimits
                .computeIfAbsent(reason, r -> new LogLimiter(1, TimeUnit.SECONDS))
                .tryAcquire();
        if (suppressed >= 0) {
            log.warn(
                    "refused {} of {} from {}: {}{}",
                    method,
                    caller,
                    call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR),
                    why,
                    suppressed > 0 ? " (" + suppressed + " more refusals not logged)" : "");
        }
        call.close(Status.fromCode(code).withDescription(why + " for " + caller), new Metadata());
        return new ServerCall.Listener<>() {};
    }
}
