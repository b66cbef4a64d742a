// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

/**
 * explain and matrix read either manifests or a running control plane, never both: --manifests
 * reads manifests, --control-plane or $KUBE_VERDICT_CONTROL_PLANE (without --manifests) asks the
 * control plane, as status, policies and observe do.
 */
final class InputChoice {
    private InputChoice() {}

    static void check(OfflineInput manifests, ControlPlaneClientOptions live) throws OfflineInput.FatalInput {
        if (manifests.given() && live.given()) {
            throw new OfflineInput.FatalInput("give --manifests DIR or --control-plane HOST:PORT, not both");
        }
        if (!manifests.given() && !live.named()) {
            throw new OfflineInput.FatalInput("give --manifests DIR (offline) or --control-plane HOST:PORT (live; "
                    + "default: $" + ControlPlaneClientOptions.ENV + ")");
        }
        if (!manifests.given() && manifests.assignIps != null) {
            throw new OfflineInput.FatalInput("--assign-ips applies to --manifests only");
        }
    }
}
