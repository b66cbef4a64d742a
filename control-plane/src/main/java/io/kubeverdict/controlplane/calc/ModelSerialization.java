package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
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
 * admin policies' selectors): fabric8's model, except that of a Pod's and a Node's spec and status
 * only the fields the calculation reads ({@link PodModel}, {@link NodeModel}, the agents' pod
 * binding) are bound; the others (volumes, probes, affinity, container statuses, node images, ...)
 * are skipped unread. Building Jackson's deserializers for a whole Pod (some 200 classes) was most
 * of a manifest directory's first load, and parsing what nobody reads costs every Pod event of a
 * real cluster. Unknown names still land in additionalProperties (the manifest loader warns of
 * them), and writing is unchanged.
 */
public final class ModelSerialization {
    /** Per model class, the JSON properties that are bound; every other known property is skipped. */
    static final Map<Class<?>, Set<String>> READ = Map.of(
            PodSpec.class, Set.of("containers", "initContainers", "hostNetwork", "nodeName"),
            Container.class, Set.of("name", "ports"),
            PodStatus.class, Set.of("phase", "podIP", "podIPs"),
            NodeSpec.class, Set.of(),
            NodeStatus.class, Set.of("addresses"));

    public static final KubernetesSerialization INSTANCE = new KubernetesSerialization(
            JsonMapper.builder().addModule(new SimpleModule("kube-verdict-reads")
                    .setDeserializerModifier(new ReadOnly())).build(), true);

    private ModelSerialization() {
    }

    /** A client of the API server that reads with this serialization (informers, lookups). */
    public static KubernetesClient client(Config config) {
        return new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(INSTANCE).build();
    }

    private static final class ReadOnly extends ValueDeserializerModifier {
        @Override
        public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription.Supplier bean,
                BeanDeserializerBuilder builder) {
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
            return builder;
        }
    }
}
