// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

/**
 * One endpoint pod as {@link Selections} holds it: the version last selected and the keys of the
 * policies selecting it. One instance per pod, shared by every {@link Selection} holding the pod,
 * so a policy joining or leaving a selection changes its pods' combinations through the
 * selection's own entries instead of looking each pod up. Mutated by {@link Selections} only.
 */
final class SelectedPod {
    PodModel pod;
    PolicyKeys keys = PolicyKeys.EMPTY;
    /** How many selections hold the pod: the entry is dropped with the last. */
    int holders;

    SelectedPod(PodModel pod) {
        this.pod = pod;
    }
}
