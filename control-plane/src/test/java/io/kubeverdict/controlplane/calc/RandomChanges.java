// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Map;
import java.util.Random;

/** What the differential tests' random event sequences share: picking an object, naming it. */
public final class RandomChanges {
    private RandomChanges() {}

    /** One of the held objects, chosen by {@code r}. */
    public static <T> T pick(Map<String, T> held, Random r) {
        return new ArrayList<>(held.values()).get(r.nextInt(held.size()));
    }

    /** "namespace/name". */
    public static String key(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }

    /** "Kind/name" of an admin-tier policy. */
    public static String adminKey(GenericKubernetesResource g) {
        return g.getKind() + "/" + g.getMetadata().getName();
    }
}
