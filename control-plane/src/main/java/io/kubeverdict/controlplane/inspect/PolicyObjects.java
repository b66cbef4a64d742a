// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.calc.PolicySources;
import io.kubeverdict.controlplane.calc.Staging;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PolicySource;

/**
 * GetPolicy's answer: the object the calculation last applied for a snapshot's policy id, in YAML
 * as fabric8 writes its model (the control plane's one serialization). The object is as the
 * control plane read it: of its metadata only what {@link ModelSerialization} binds.
 */
final class PolicyObjects {
    /** Longer ids name nothing: a namespace and a name are 63 and 253 characters at most. */
    static final int MAX_ID_LENGTH = 400;

    private final PolicySources sources;

    PolicyObjects(PolicySources sources) {
        this.sources = sources;
    }

    PolicySource find(PolicyId id) {
        if (id.getTier().length() + id.getName().length() > MAX_ID_LENGTH) {
            throw Status.INVALID_ARGUMENT
                    .withDescription("a policy id is at most " + MAX_ID_LENGTH + " characters")
                    .asRuntimeException();
        }
        String key = PolicySources.key(id);
        if (key == null) {
            throw notFound(id, "names no policy (tiers: default with namespace/name, admin, baseline)");
        }
        HasMetadata object = sources.get(key).orElseThrow(() -> notFound(id, "is not held by the control plane"));
        ObjectMeta meta = object.getMetadata();
        return PolicySource.newBuilder()
                .setKind(object.getKind() == null ? "" : object.getKind())
                .setNamespace(meta.getNamespace() == null ? "" : meta.getNamespace())
                .setName(meta.getName() == null ? "" : meta.getName())
                .setStaged(Staging.isStaged(meta))
                .setResourceVersion(meta.getResourceVersion() == null ? "" : meta.getResourceVersion())
                .setYaml(ModelSerialization.INSTANCE.asYaml(object))
                .build();
    }

    private static StatusRuntimeException notFound(PolicyId id, String why) {
        return Status.NOT_FOUND
                .withDescription("policy " + id.getTier() + "/" + id.getName() + " " + why)
                .asRuntimeException();
    }
}
