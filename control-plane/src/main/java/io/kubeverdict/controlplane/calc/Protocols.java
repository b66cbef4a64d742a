// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.Protocol;

/** Kubernetes protocol names: absent means TCP; only TCP, UDP and SCTP exist. */
public final class Protocols {
    private Protocols() {}

    /** The protocol, TCP for null, or null when the name is not a Kubernetes protocol. */
    public static Protocol parse(String name) {
        if (name == null || name.isEmpty()) {
            return Protocol.TCP;
        }
        return switch (name) {
            case "TCP" -> Protocol.TCP;
            case "UDP" -> Protocol.UDP;
            case "SCTP" -> Protocol.SCTP;
            default -> null;
        };
    }
}
