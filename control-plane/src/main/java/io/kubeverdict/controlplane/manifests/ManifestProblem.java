package io.kubeverdict.controlplane.manifests;

/** Something in the manifests that was not used as written. It never widens what is allowed. */
public record ManifestProblem(Origin origin, String message) {
    @Override
    public String toString() {
        return origin + ": " + message;
    }
}
