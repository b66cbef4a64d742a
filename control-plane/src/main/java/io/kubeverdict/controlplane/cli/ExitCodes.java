// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

/** What the commands exit with, the same everywhere. */
final class ExitCodes {
    static final int OK = 0;
    /** The answer is the unhappy one: explain says DENY, status finds a node out of sync. */
    static final int NEGATIVE = 1;
    /** Bad usage or unusable input (picocli's own code for usage errors). */
    static final int USAGE = 2;
    /** The control plane could not be asked (unreachable, refused, not ready). */
    static final int UNAVAILABLE = 3;

    private ExitCodes() {}
}
