// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

/**
 * Where something in a manifest directory is: a file (relative to the directory, '/'-separated),
 * the 1-based number of its document within the file (empty documents are not counted; 0 when
 * the file could not be split into documents), and the 1-based line and column in the file.
 */
public record Origin(String file, int document, int line, int column) {
    @Override
    public String toString() {
        return file + ":" + line + ":" + column + (document > 0 ? " (document " + document + ")" : "");
    }
}
