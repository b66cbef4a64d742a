// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

/**
 * A pod address the calculation refused: it lies outside the pod ranges of the pod's node (Node
 * spec.podCIDRs) and is not one of that node's own addresses, so the node had no business giving it
 * (a lying kubelet's mirror pod, a misconfigured CNI). Left out as if the pod did not have it.
 *
 * @param pod "namespace/name"
 */
public record RefusedAddress(String pod, String node, String address) implements Comparable<RefusedAddress> {
    @Override
    public int compareTo(RefusedAddress o) {
        int c = pod.compareTo(o.pod);
        return c != 0 ? c : address.compareTo(o.address);
    }
}
