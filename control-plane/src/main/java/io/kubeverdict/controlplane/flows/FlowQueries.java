// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import com.google.protobuf.util.Durations;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.Verdict;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/** ListFlows: a request's filters over the history, merged over buckets, most seen first, limited. */
public final class FlowQueries {
    static final int DEFAULT_LIMIT = 10_000;
    static final int MAX_LIMIT = 100_000;

    private FlowQueries() {}

    /** @throws IllegalArgumentException for a request that cannot be answered (said why) */
    public static ListFlowsResponse answer(FlowHistory history, ListFlowsRequest request) {
        String pod = request.getPod();
        if (!pod.isEmpty() && (pod.indexOf('/') <= 0 || pod.endsWith("/"))) {
            throw new IllegalArgumentException("pod: want NAMESPACE/NAME, got '" + pod + "'");
        }
        if (request.getVerdict() == Verdict.UNRECOGNIZED) {
            throw new IllegalArgumentException("verdict: unknown value");
        }
        int limit = request.getLimit() <= 0 ? DEFAULT_LIMIT : Math.min(request.getLimit(), MAX_LIMIT);
        long since = request.hasSince() ? FlowProtos.millis(request.getSince()) : Long.MIN_VALUE / 2;
        List<FlowHistory.Held> matched = history.merged(filter(request), since);
        ListFlowsResponse.Builder b = ListFlowsResponse.newBuilder()
                .setWindow(Durations.fromMillis(history.limits().window().toMillis()))
                .setOmitted(Math.max(0, matched.size() - limit));
        long oldest = history.oldest();
        if (oldest >= 0) {
            b.setOldest(FlowProtos.timestamp(oldest));
        }
        matched.stream().limit(limit).forEach(h -> b.addFlows(FlowProtos.toProto(h, false)));
        return b.build();
    }

    /** The key filters (namespace, verdict, staged, policy); the pod filter is on the merged record's last pods. */
    static Predicate<FlowKey> filter(ListFlowsRequest r) {
        Predicate<FlowKey> p = k -> true;
        if (!r.getNamespace().isEmpty()) {
            String ns = r.getNamespace();
            p = p.and(k -> k.source().namespace().equals(ns)
                    || k.destination().namespace().equals(ns));
        }
        if (r.getVerdict() != Verdict.VERDICT_UNSPECIFIED) {
            p = p.and(k -> k.verdict() == r.getVerdict());
        }
        if (r.getStaged()) {
            p = p.and(FlowKey::stagedFlip);
        }
        if (!r.getPolicy().isEmpty()) {
            String policy = r.getPolicy();
            p = p.and(k -> !k.policyName().isEmpty()
                    && (k.policyText().equals(policy) || k.policyName().equals(policy)));
        }
        if (!r.getPod().isEmpty()) {
            String ns = r.getPod().substring(0, r.getPod().indexOf('/'));
            String name = r.getPod().substring(r.getPod().indexOf('/') + 1);
            // A flow is per workload: the pod's workload, found from its name the way its labels would.
            p = p.and(k -> podOf(k.source(), ns, name) || podOf(k.destination(), ns, name));
        }
        return p;
    }

    private static boolean podOf(FlowKey.Side s, String ns, String pod) {
        if (!s.namespace().equals(ns)) {
            return false;
        }
        if (s.workload().equals(pod)) {
            return true;
        }
        return pod.startsWith(s.workload() + "-")
                && GENERATED_SUFFIX
                        .matcher(pod.substring(s.workload().length() + 1))
                        .matches();
    }

    /** What controllers append to their workload's name: "7d4b9c5f6-x2x9z", "x2x9z", "0". */
    private static final Pattern GENERATED_SUFFIX = Pattern.compile("([a-z0-9]{1,10}-)?[a-z0-9]{5}|\\d+");
}
