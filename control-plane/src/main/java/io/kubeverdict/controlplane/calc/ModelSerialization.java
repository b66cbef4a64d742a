// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.deser.BeanDeserializerBuilder;
import tools.jackson.databind.deser.SettableBeanProperty;
import tools.jackson.databind.deser.ValueDeserializerModifier;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;

/**
 * The control plane's one fabric8 serialization (manifest files, the API server's objects, the
 * admin policies' selectors): fabric8's model, except that of an object's metadata, a Pod's and a
 * Node's spec and status and a Namespace only the fields the control plane reads ({@link PodModel},
 * {@link NodeModel}, the agents' pod binding, the informers' names and resource versions) are
 * bound (of annotations only kube-verdict's own: {@link OwnAnnotations}; a Pod's readiness gates and
 * conditions for the readiness gate); the others
 * (managedFields, owner references, other annotations, volumes, probes, affinity,
 * container statuses, node images, a Namespace's spec and status, ...) are skipped unread.
 * Building Jackson's deserializers for a whole Pod (some 200 classes) was most of a manifest
 * directory's first load, and parsing what nobody reads (managedFields is often most of a Pod)
 * costs every event of a real cluster. Unknown names still land in additionalProperties (the
 * manifest loader warns of them), and writing is unchanged. So an object read with it is not a
 * whole object: never write one back (read-modify-write would drop what was skipped).
 */
public final class ModelSerialization {
    /** Per model class, the JSON properties that are bound; every other known property is skipped. */
    static final Map<Class<?>, Set<String>> READ = Map.of(
            ObjectMeta.class, Set.of("name", "namespace", "labels", "uid", "resourceVersion", "annotations"),
            Namespace.class, Set.of("apiVersion", "kind", "metadata"),
            // readinessGates and conditions: the readiness gate's (receipts.PodReadinessGates).
            PodSpec.class, Set.of("containers", "initContainers", "hostNetwork", "nodeName", "readinessGates"),
            Container.class, Set.of("name", "ports"),
            PodStatus.class, Set.of("phase", "podIP", "podIPs", "conditions"),
            NodeSpec.class, Set.of("podCIDR", "podCIDRs"),
            NodeStatus.class, Set.of("addresses"));

    public static final KubernetesSerialization INSTANCE = new KubernetesSerialization(
            JsonMapper.builder()
                    .addModule(new SimpleModule("kube-verdict-reads").setDeserializerModifier(new ReadOnly()))
                    .build(),
            true);

    private ModelSerialization() {}

    /** A client of the API server that reads with this serialization (informers, lookups). */
    public static KubernetesClient client(Config config) {
        return new KubernetesClientBuilder()
                .withConfig(config)
                .withKubernetesSerialization(INSTANCE)
                .build();
    }

    /**
     * Of an object's annotations only kube-verdict's own ({@code kube-verdict.io/...}, such as the
     * staged-policy ones) are kept; the others (often large, like last-applied-configuration) are
     * skipped unread.
     */
    static final class OwnAnnotations extends tools.jackson.databind.ValueDeserializer<Map<String, String>> {
        static final String PREFIX = "kube-verdict.io/";

        @Override
        public Map<String, String> deserialize(
                tools.jackson.core.JsonParser p, tools.jackson.databind.DeserializationContext ctxt) {
            if (!p.isExpectedStartObjectToken()) {
                return ctxt.reportInputMismatch(this, "metadata.annotations: want an object, got %s", p.currentToken());
            }
            Map<String, String> kept = new LinkedHashMap<>();
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                tools.jackson.core.JsonToken value = p.nextToken();
                if (name.startsWith(PREFIX) && value.isScalarValue()) {
                    kept.put(name, p.getString());
                } else {
                    p.skipChildren();
                }
            }
            return kept;
        }
    }

    private static final class ReadOnly extends ValueDeserializerModifier {
        @Override
        public BeanDeserializerBuilder updateBuilder(
                DeserializationConfig config, BeanDescription.Supplier bean, BeanDeserializerBuilder builder) {
            Set<String> read = READ.get(bean.getBeanClass());
            if (read == null) {
                return builder;
            }
            List<SettableBeanProperty> skipped = new ArrayList<>();
            builder.getProperties().forEachRemaining(p -> {
                if (!read.contains(p.getName())) {
                    skipped.add(p);
                }
            });
            for (SettableBeanProperty p : skipped) {
                builder.removeProperty(p.getFullName());
                builder.addIgnorable(p.getName()); // skipped, not "unknown"
            }
            if (bean.getBeanClass() == ObjectMeta.class) {
                SettableBeanProperty annotations =
                        builder.findProperty(tools.jackson.databind.PropertyName.construct("annotations"));
                if (annotations != null) {
                    builder.addOrReplaceProperty(annotations.withValueDeserializer(new OwnAnnotations()), true);
                }
            }
            return builder;
        }
    }
}
