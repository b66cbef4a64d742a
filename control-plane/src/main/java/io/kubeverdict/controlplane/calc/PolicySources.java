// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The policy objects as the calculation last applied them, by key ("namespace/name",
 * "anp:name", "banp:name", "cnp:name"): what the inspection service shows as a policy's YAML.
 * Written on the event thread once the index has applied a change (a change that throws leaves
 * the previous object), read from any thread without asking the calculation. It holds the objects
 * the sources already hold (the informer's trimmed copy, the manifest as loaded), not copies;
 * nobody mutates an object once it is delivered.
 */
public final class PolicySources {
    private final ConcurrentHashMap<String, HasMetadata> objects = new ConcurrentHashMap<>();

    void applied(String key, HasMetadata object) {
        objects.put(key, object);
    }

    void deleted(String key) {
        objects.remove(key);
    }

    /** The object last applied under this key. */
    public Optional<HasMetadata> get(String key) {
        return Optional.ofNullable(objects.get(key));
    }

    public int size() {
        return objects.size();
    }

    /**
     * The key of the object a snapshot's policy id stands for (a staged one's "staged:" prefix
     * dropped: a staged object is keyed by its own kind and name), or null when the id cannot name
     * a policy object (an unknown tier, a NetworkPolicy name without a namespace).
     */
    public static String key(PolicyId id) {
        String name = Staging.liveKey(id.getName());
        if (name.isEmpty()) {
            return null;
        }
        String cnp = AdminPolicyKind.CLUSTER_NETWORK_POLICY.shortName() + ":";
        return switch (id.getTier()) {
            case PolicyCompiler.TIER -> {
                int slash = name.indexOf('/');
                yield slash > 0 && slash < name.length() - 1 && name.indexOf('/', slash + 1) < 0 ? name : null;
            }
            case AdminPolicyCompiler.ADMIN_TIER ->
                name.startsWith(cnp) ? name : AdminPolicy.key(AdminPolicyKind.ADMIN_NETWORK_POLICY, name);
            case AdminPolicyCompiler.BASELINE_TIER ->
                name.startsWith(cnp) ? name : AdminPolicy.key(AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY, name);
            default -> null;
        };
    }
}
