// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.io.PrintWriter;

/**
 * The offline tools' answer to an OutOfMemoryError: a clear message and exit 1 instead of a stack
 * trace. Caught at the command's top, after its frames (and the data they held) are gone, so the
 * message itself has room.
 */
final class OutOfMemory {
    static final int EXIT = 1;

    private OutOfMemory() {}

    static int report(PrintWriter err, String what) {
        long maxMiB = Runtime.getRuntime().maxMemory() / (1024 * 1024);
        long suggestMiB = Math.max(2048, Integer.highestOneBit((int) Math.min(Integer.MAX_VALUE / 4, maxMiB)) * 4L);
        err.println("not enough memory for " + what + " (the Java heap is limited to " + maxMiB + " MiB); "
                + "raise it with -Xmx, e.g. KUBE_VERDICT_JAVA_OPTS=-Xmx" + suggestMiB / 1024
                + "g bin/kube-verdict ...");
        err.flush();
        return EXIT;
    }
}
