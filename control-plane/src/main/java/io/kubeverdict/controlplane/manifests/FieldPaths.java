// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonPointer;

/** Field paths of a document: as JSON pointers (to find them in the file) and as people write them. */
final class FieldPaths {
    private FieldPaths() {}

    /** The path a binding error points at. */
    static JsonPointer pointer(List<JacksonException.Reference> path) {
        JsonPointer p = JsonPointer.empty();
        for (JacksonException.Reference r : path) {
            p = r.getPropertyName() != null
                    ? p.appendProperty(r.getPropertyName())
                    : r.getIndex() >= 0 ? p.appendIndex(r.getIndex()) : p;
        }
        return p;
    }

    /** "spec.ingress[0].from[1].ipBlock.cidr" */
    static String dotted(JsonPointer pointer) {
        StringBuilder sb = new StringBuilder();
        for (JsonPointer p = pointer; p != null && !p.matches(); p = p.tail()) {
            if (p.getMatchingIndex() >= 0) {
                sb.append('[').append(p.getMatchingIndex()).append(']');
            } else {
                sb.append(sb.isEmpty() ? "" : ".").append(p.getMatchingProperty());
            }
        }
        return sb.toString();
    }
}
