// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

/**
 * Something in the manifests, with where it is: either an error that rejects the whole load
 * (inside {@link ManifestLoadException}) or a warning about something used otherwise than
 * written, which never widens what is allowed.
 */
public record ManifestProblem(Origin origin, String message) {
    @Override
    public String toString() {
        return origin + ": " + message;
    }
}
