// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

/** explain and matrix read either manifests or a running control plane, never both. */
final class InputChoice {
    private InputChoice() {}

    static void check(OfflineInput manifests, ControlPlaneClientOptions live) throws OfflineInput.FatalInput {
        if (manifests.given() == live.given()) {
            throw new OfflineInput.FatalInput(
                    manifests.given()
                            ? "give --manifests DIR or --control-plane HOST:PORT, not both"
                            : "give --manifests DIR (offline) or --control-plane HOST:PORT (live)");
        }
        if (live.given() && manifests.assignIps != null) {
            throw new OfflineInput.FatalInput("--assign-ips applies to --manifests only");
        }
    }
}
