// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.Map;
import java.util.function.Function;

/**
 * Staged policies (docs/design/staged-policies.md): an object of any policy kind annotated
 * {@code kube-verdict.io/staged: "true"} is calculated and sent under the key and name
 * "staged:" + its own, and never listed in an endpoint's enforced tiers. It replaces, in the
 * would-be tiers, the live policy of its kind (and namespace) named by
 * {@code kube-verdict.io/staged-replaces}, else the live policy of its own name (which only a
 * manifest directory's staged part can hold next to it); without such a live policy it is added.
 *
 * @param ownKey the key the object would have if it were live ("ns/name", "anp:name")
 * @param replaces the key of the live policy it takes the place of in the would-be tiers
 */
public record Staging(String ownKey, String replaces) {

    public static final String ANNOTATION = "kube-verdict.io/staged";
    public static final String REPLACES_ANNOTATION = "kube-verdict.io/staged-replaces";
    /** The prefix of a staged policy's key and of its name in the snapshot (policy.proto, PolicyId). */
    public static final String PREFIX = "staged:";

    /** Whether the object is staged (calculated and sent, enforced nowhere). */
    public static boolean isStaged(ObjectMeta meta) {
        Map<String, String> annotations = meta == null ? null : meta.getAnnotations();
        return annotations != null && "true".equals(annotations.get(ANNOTATION));
    }

    /** The policy's key in the index: "staged:" + its own. */
    String key() {
        return PREFIX + ownKey;
    }

    /** The live key of a key (the prefix taken off a staged one). */
    static String liveKey(String key) {
        return key.startsWith(PREFIX) ? key.substring(PREFIX.length()) : key;
    }

    /**
     * How an object is staged, or null when it is live (see {@link #problem} for an annotation that
     * is neither "true" nor "false": live).
     *
     * @param keyOf the key of a live policy of the object's kind (and namespace) by name
     */
    static Staging of(ObjectMeta meta, String ownKey, Function<String, String> keyOf) {
        if (!isStaged(meta)) {
            return null;
        }
        String replaces = meta.getAnnotations().get(REPLACES_ANNOTATION);
        return new Staging(ownKey, replaces == null || replaces.isEmpty() ? ownKey : keyOf.apply(replaces));
    }

    /**
     * What is wrong with the object's staged annotation, or null. A value other than "true" or
     * "false" leaves the object live: it is a policy its author wrote, and leaving it unenforced
     * would allow what it denies.
     */
    static String problem(ObjectMeta meta) {
        Map<String, String> annotations = meta == null ? null : meta.getAnnotations();
        String value = annotations == null ? null : annotations.get(ANNOTATION);
        if (value == null || value.equals("true") || value.equals("false")) {
            return null;
        }
        return "annotation " + ANNOTATION + ": \"" + value + "\" is neither \"true\" nor \"false\";"
                + " the policy is enforced, not staged";
    }

    /** The policy as sent: its id's name prefixed, so no endpoint's enforced tiers can name it. */
    ActivePolicy rename(ActivePolicy live) {
        PolicyId id = live.getId();
        return live.toBuilder()
                .setId(id.toBuilder().setName(PREFIX + id.getName()))
                .build();
    }
}
