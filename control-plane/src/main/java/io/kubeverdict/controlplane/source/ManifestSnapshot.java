// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The usable objects of one load of a manifest directory, keyed by kind/namespace/name, and the
 * changes that turn one load into the next (pure).
 */
final class ManifestSnapshot {
    /** A change for the calculator, named like the informer events ("pod/upsert"), of one object. */
    record Change(String kind, String object, Consumer<PolicyCalculator> apply) {}

    static final ManifestSnapshot EMPTY = new ManifestSnapshot(Map.of());

    private final Map<String, HasMetadata> objects;

    private ManifestSnapshot(Map<String, HasMetadata> objects) {
        this.objects = objects;
    }

    /**
     * Keeps namespaces, pods, network policies, nodes and the admin-tier policies; returns the
     * kinds it ignored via {@code ignored}.
     */
    static ManifestSnapshot of(List<HasMetadata> loaded, List<String> ignored) {
        Map<String, HasMetadata> byKey = new LinkedHashMap<>();
        for (HasMetadata o : loaded) {
            if (o instanceof Node || adminKind(o) != null) {
                byKey.put(key(o), o);
            } else if (o instanceof Namespace || o instanceof Pod || o instanceof NetworkPolicy) {
                if (o instanceof Pod || o instanceof NetworkPolicy) {
                    if (o.getMetadata().getNamespace() == null) {
                        o.getMetadata().setNamespace("default"); // as kubectl apply would
                    }
                }
                byKey.put(key(o), o);
            } else {
                ignored.add(o.getKind() + " " + o.getMetadata().getName());
            }
        }
        return new ManifestSnapshot(byKey);
    }

    int size() {
        return objects.size();
    }

    /** Upserts for new and changed objects, deletes for vanished ones. */
    List<Change> changesTo(ManifestSnapshot next) {
        List<Change> out = new ArrayList<>();
        for (Map.Entry<String, HasMetadata> e : next.objects.entrySet()) {
            HasMetadata before = objects.get(e.getKey());
            if (!Objects.equals(before, e.getValue())) {
                out.add(upsert(e.getValue()));
            }
        }
        for (Map.Entry<String, HasMetadata> e : objects.entrySet()) {
            if (!next.objects.containsKey(e.getKey())) {
                out.add(delete(e.getValue()));
            }
        }
        return out;
    }

    private static AdminPolicyKind adminKind(HasMetadata o) {
        return o instanceof GenericKubernetesResource g ? AdminPolicyKind.of(g.getApiVersion(), g.getKind()) : null;
    }

    private static Change upsert(HasMetadata o) {
        AdminPolicyKind admin = adminKind(o);
        if (admin != null) {
            GenericKubernetesResource g = (GenericKubernetesResource) o;
            return new Change(admin.eventKind() + "/upsert", key(o), c -> c.upsertAdminPolicy(g));
        } else if (o instanceof Node node) {
            return new Change("node/upsert", key(o), c -> c.upsertNode(node));
        } else if (o instanceof Namespace n) {
            return new Change("namespace/upsert", key(o), c -> c.upsertNamespace(n));
        } else if (o instanceof Pod p) {
            return new Change("pod/upsert", key(o), c -> c.upsertPod(p));
        }
        NetworkPolicy np = (NetworkPolicy) o;
        return new Change("networkpolicy/upsert", key(o), c -> c.upsertPolicy(np));
    }

    private static Change delete(HasMetadata o) {
        String ns = o.getMetadata().getNamespace();
        String name = o.getMetadata().getName();
        AdminPolicyKind admin = adminKind(o);
        if (admin != null) {
            return new Change(admin.eventKind() + "/delete", key(o), c -> c.deleteAdminPolicy(admin, name));
        } else if (o instanceof Node) {
            return new Change("node/delete", key(o), c -> c.deleteNode(name));
        } else if (o instanceof Namespace) {
            return new Change("namespace/delete", key(o), c -> c.deleteNamespace(name));
        } else if (o instanceof Pod) {
            return new Change("pod/delete", key(o), c -> c.deletePod(ns, name));
        }
        return new Change("networkpolicy/delete", key(o), c -> c.deletePolicy(ns, name));
    }

    private static String key(HasMetadata o) {
        return o.getKind() + "/" + Objects.toString(o.getMetadata().getNamespace(), "") + "/"
                + o.getMetadata().getName();
    }
}
