package io.kubeverdict.controlplane.manifests;

/** Where an object came from: a file (relative to the manifest directory) and the 1-based
 *  number of its document within the file (empty documents are not counted). */
public record Origin(String file, int document) {
    @Override
    public String toString() {
        return file + " document " + document;
    }
}
