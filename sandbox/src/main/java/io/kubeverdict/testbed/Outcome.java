// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

/** What one probe of one ordered pod pair saw. */
public enum Outcome {
    /** TCP handshake completed, or a UDP reply came back. */
    CONNECTED,
    /** The destination answered with a reset or ICMP unreachable. */
    REFUSED,
    /** Nothing came back in time (what a dropped first packet looks like). */
    TIMEOUT,
    /** The probe could not even be sent. */
    ERROR,
    /** The protocol cannot be probed on this kernel (SCTP). */
    UNSUPPORTED;

    public boolean connected() {
        return this == CONNECTED;
    }
}
