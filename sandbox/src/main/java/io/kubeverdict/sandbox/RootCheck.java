// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The sandbox needs root; saying so up front beats a failed `ip netns add`. */
final class RootCheck {
    private RootCheck() {}

    static void require() throws IOException {
        if (!effectiveUidIsRoot(Files.readAllLines(Path.of("/proc/self/status")))) {
            throw new SandboxException("the sandbox needs root: it creates network namespaces, veth links and "
                    + "nftables tables, and runs agents that bind NFQUEUE (run it with sudo)");
        }
    }

    /** From /proc/self/status: "Uid: real effective saved fs". */
    static boolean effectiveUidIsRoot(List<String> status) {
        for (String line : status) {
            if (line.startsWith("Uid:")) {
                return line.split("\\s+")[2].equals("0");
            }
        }
        return false;
    }
}
