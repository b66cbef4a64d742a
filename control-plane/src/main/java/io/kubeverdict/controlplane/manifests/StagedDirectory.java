// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.kubeverdict.controlplane.calc.Staging;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code staged/} subdirectory of a manifest directory (top level only): the policies found
 * there are read as staged, as if each carried {@code kube-verdict.io/staged: "true"}. Only policy
 * kinds belong there: any other object would be read as live (a Pod, a Namespace) or skipped, and
 * either way not what its author meant, so it is refused. Pure.
 */
final class StagedDirectory {
    /** The subdirectory's prefix in the loader's relative paths ({@link ManifestFiles}: "/"-separated). */
    static final String PREFIX = "staged/";

    private StagedDirectory() {}

    /** Whether a file (relative to the manifest directory) is in the staged directory. */
    static boolean holds(String file) {
        return file.startsWith(PREFIX);
    }

    /** Whether {@code kind} (one {@link ManifestKinds} reads) is a policy kind. */
    static boolean isPolicyKind(String kind) {
        return !kind.equals("Namespace") && !kind.equals("Pod") && !kind.equals("Node");
    }

    /**
     * The object as staged: a copy with the staged annotation set; null when the object says
     * otherwise itself (an annotation {@code kube-verdict.io/staged} other than "true").
     */
    static JsonNode mark(JsonNode object) {
        JsonNode metadata = object.get("metadata");
        JsonNode annotations = metadata == null ? null : metadata.get("annotations");
        JsonNode own = annotations == null ? null : annotations.get(Staging.ANNOTATION);
        if (own != null && !own.isNull() && !(own.isString() && own.asString().equals("true"))) {
            return null;
        }
        if ((metadata != null && !metadata.isObject())
                || (annotations != null && !annotations.isNull() && !annotations.isObject())) {
            return object; // left as it is: binding reports the wrong type with its place
        }
        ObjectNode copy = (ObjectNode) object.deepCopy();
        ObjectNode meta = copy.has("metadata") ? (ObjectNode) copy.get("metadata") : copy.putObject("metadata");
        ObjectNode ann = meta.get("annotations") instanceof ObjectNode a ? a : meta.putObject("annotations");
        ann.put(Staging.ANNOTATION, "true");
        return copy;
    }
}
