// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

/**
 * Explicit bounds for reading manifests, so that hostile or broken input is an ordinary load
 * error instead of a crash (deep nesting used to overflow the stack) or a silent drop (a document
 * over the YAML library's default size used to vanish).
 *
 * @param maxNestingDepth      most nested objects/arrays in a document (Kubernetes objects,
 *                             managedFields included, stay far below 64)
 * @param maxFileChars         most characters in one file
 * @param maxStringChars       most characters in one string value
 */
public record ParserLimits(int maxNestingDepth, int maxFileChars, int maxStringChars) {
    /**
     * The limits the control plane and the offline tools use: generous enough for a
     * `kubectl get pods -A -o yaml` dump of a big cluster in one file (the API server itself
     * refuses objects over 3 MiB).
     */
    public static final ParserLimits DEFAULT = new ParserLimits(100, 512 * 1024 * 1024, 16 * 1024 * 1024);

    public ParserLimits {
        if (maxNestingDepth < 1 || maxFileChars < 1 || maxStringChars < 1) {
            throw new IllegalArgumentException("parser limits must be positive");
        }
    }
}
