// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.Verdict;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import java.util.List;
import java.util.Map;

/**
 * A flow record as an OpenTelemetry log record's attributes and body (pure). The names are a
 * stable interface for the stores behind a collector: docs/operations.md lists them; rename none.
 */
public final class FlowLogAttributes {
    private FlowLogAttributes() {}

    public static final String PREFIX = "kubeverdict.flow.";
    /** The log record's event name, one for every flow record. */
    public static final String EVENT_NAME = "kubeverdict.flow";

    public static final AttributeKey<Long> PROTOCOL = AttributeKey.longKey(PREFIX + "protocol");
    public static final AttributeKey<Long> PORT = AttributeKey.longKey(PREFIX + "port");
    public static final AttributeKey<String> VERDICT = AttributeKey.stringKey(PREFIX + "verdict");
    public static final AttributeKey<String> DIRECTION = AttributeKey.stringKey(PREFIX + "direction");
    public static final AttributeKey<String> POLICY = AttributeKey.stringKey(PREFIX + "policy");
    public static final AttributeKey<String> POLICY_TIER = AttributeKey.stringKey(PREFIX + "policy.tier");
    public static final AttributeKey<String> POLICY_NAME = AttributeKey.stringKey(PREFIX + "policy.name");
    public static final AttributeKey<String> RULE = AttributeKey.stringKey(PREFIX + "rule");
    public static final AttributeKey<String> DECIDED_BY = AttributeKey.stringKey(PREFIX + "decided_by");
    public static final AttributeKey<Long> COUNT = AttributeKey.longKey(PREFIX + "count");
    /** Only on records the staged policies would decide otherwise. */
    public static final AttributeKey<String> STAGED_VERDICT = AttributeKey.stringKey(PREFIX + "staged.verdict");

    public static final AttributeKey<String> STAGED_POLICY = AttributeKey.stringKey(PREFIX + "staged.policy");
    public static final AttributeKey<String> STAGED_RULE = AttributeKey.stringKey(PREFIX + "staged.rule");
    public static final AttributeKey<Long> BUCKET_START = AttributeKey.longKey(PREFIX + "bucket_start_unix_ms");
    public static final AttributeKey<Long> FIRST_SEEN = AttributeKey.longKey(PREFIX + "first_seen_unix_ms");
    public static final AttributeKey<Long> LAST_SEEN = AttributeKey.longKey(PREFIX + "last_seen_unix_ms");

    /** The attribute keys of one side ("source" or "destination"). */
    public record SideKeys(
            AttributeKey<String> namespace,
            AttributeKey<String> workload,
            AttributeKey<List<String>> labels,
            AttributeKey<String> address,
            AttributeKey<String> lastPod,
            AttributeKey<String> lastIp) {
        static SideKeys of(String side) {
            String p = PREFIX + side + ".";
            return new SideKeys(
                    AttributeKey.stringKey(p + "namespace"),
                    AttributeKey.stringKey(p + "workload"),
                    AttributeKey.stringArrayKey(p + "labels"),
                    AttributeKey.stringKey(p + "address"),
                    AttributeKey.stringKey(p + "last_pod"),
                    AttributeKey.stringKey(p + "last_ip"));
        }
    }

    public static final SideKeys SOURCE = SideKeys.of("source");
    public static final SideKeys DESTINATION = SideKeys.of("destination");

    /** Every attribute of the record; empty strings are left out (a side outside the cluster has no namespace). */
    public static Attributes of(FlowHistory.Held h) {
        FlowKey k = h.key();
        AttributesBuilder b = Attributes.builder();
        side(b, SOURCE, k.source(), h.sourcePod(), h.sourceIp());
        side(b, DESTINATION, k.destination(), h.destinationPod(), h.destinationIp());
        b.put(PROTOCOL, (long) k.protocol());
        b.put(PORT, (long) k.port());
        b.put(VERDICT, verdict(k.verdict()));
        text(b, DIRECTION, k.direction());
        text(b, POLICY, k.policyText());
        text(b, POLICY_TIER, k.policyTier());
        text(b, POLICY_NAME, k.policyName());
        text(b, RULE, k.rule());
        text(b, DECIDED_BY, k.decidedBy());
        if (k.stagedFlip()) {
            b.put(STAGED_VERDICT, verdict(k.staged().getVerdict()));
            text(b, STAGED_POLICY, k.stagedPolicyText());
            text(b, STAGED_RULE, k.staged().getRuleId());
        }
        b.put(COUNT, h.count());
        b.put(BUCKET_START, h.bucketStart());
        b.put(FIRST_SEEN, h.firstSeen());
        b.put(LAST_SEEN, h.lastSeen());
        return b.build();
    }

    /** One line for stores that show the body only: "x/a -> x/b port 80 allowed, 3 times". */
    public static String body(FlowHistory.Held h) {
        FlowKey k = h.key();
        return k.source().display() + " -> " + k.destination().display() + " port " + k.port() + " protocol "
                + k.protocol() + " " + verdict(k.verdict()) + ", " + h.count() + (h.count() == 1 ? " time" : " times");
    }

    /** The CLI's words (`flows`, `observe`): allowed or denied. */
    static String verdict(Verdict v) {
        return v == Verdict.VERDICT_ALLOW ? "allowed" : "denied";
    }

    private static void side(AttributesBuilder b, SideKeys keys, FlowKey.Side s, String pod, String ip) {
        text(b, keys.namespace(), s.namespace());
        text(b, keys.workload(), s.workload());
        if (!s.labels().isEmpty()) {
            b.put(keys.labels(), labels(s.labels()));
        }
        text(b, keys.address(), s.address());
        text(b, keys.lastPod(), pod);
        text(b, keys.lastIp(), ip);
    }

    /** "key=value", sorted: one stable attribute however many labels a workload has. */
    static List<String> labels(Map<String, String> labels) {
        return labels.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .sorted()
                .toList();
    }

    private static void text(AttributesBuilder b, AttributeKey<String> key, String value) {
        if (value != null && !value.isEmpty()) {
            b.put(key, value);
        }
    }
}
