// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Map;

/**
 * An informer cache that drops what the calculation never reads before storing an object:
 * managedFields (often the largest part of a Pod) and the last-applied-configuration annotation.
 * The informer hands the same (trimmed) instance to the event handlers.
 */
final class TrimmingItemStore<T extends HasMetadata> extends BasicItemStore<T> {
    static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

    TrimmingItemStore() {
        super(Cache::metaNamespaceKeyFunc);
    }

    @Override
    public T put(String key, T obj) {
        return super.put(key, trim(obj));
    }

    static <T extends HasMetadata> T trim(T obj) {
        ObjectMeta meta = obj.getMetadata();
        if (meta != null) {
            meta.setManagedFields(null);
            Map<String, String> annotations = meta.getAnnotations();
            if (annotations != null && annotations.containsKey(LAST_APPLIED)) {
                annotations.remove(LAST_APPLIED);
            }
        }
        return obj;
    }
}
