// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Wires one informer to the {@link ClusterEventSink}: a trimmed cache, adds and updates as
 * upserts (periodic resyncs, same resourceVersion, dropped: the calculation already has the
 * object), deletes as deletes, and a callback on the informer's first list (fabric8 delivers it
 * after that list's adds).
 */
final class InformerEvents {
    private InformerEvents() {}

    static <T extends HasMetadata> SharedIndexInformer<T> wire(
            SharedIndexInformer<T> informer,
            ClusterEventSink sink,
            String kind,
            BiConsumer<PolicyCalculator, T> upsert,
            BiConsumer<PolicyCalculator, T> delete,
            Runnable firstList) {
        informer.removeNamespaceIndex();
        informer.itemStore(new TrimmingItemStore<>());
        informer.addEventHandler(new ResourceEventHandler<T>() {
            private boolean listed;

            @Override
            public void onList(String resourceVersion, boolean initial) {
                if (!listed) {
                    listed = true;
                    firstList.run();
                }
            }

            @Override
            public void onAdd(T obj) {
                sink.change(kind + "/upsert", object(kind, obj), c -> upsert.accept(c, obj));
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                if (oldObj != null
                        && Objects.equals(
                                oldObj.getMetadata().getResourceVersion(),
                                newObj.getMetadata().getResourceVersion())) {
                    return; // periodic resync: nothing changed
                }
                sink.change(kind + "/upsert", object(kind, newObj), c -> upsert.accept(c, newObj));
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                sink.change(kind + "/delete", object(kind, obj), c -> delete.accept(c, obj));
            }
        });
        return informer;
    }

    /** The object a change is about ("pod/ns/name", "node/name"): a newer change supersedes an older one's retry. */
    private static String object(String kind, HasMetadata obj) {
        String ns = obj.getMetadata().getNamespace();
        return kind + "/" + (ns == null ? "" : ns + "/") + obj.getMetadata().getName();
    }
}
