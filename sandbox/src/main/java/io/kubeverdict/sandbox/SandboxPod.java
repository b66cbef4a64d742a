package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.ServePort;
import java.util.List;

/**
 * What the sandbox needs to know of one Pod manifest. node and ips are empty when the manifest
 * leaves them to the sandbox; phase is null when the manifest has no status.
 */
public record SandboxPod(String name, String node, List<String> ips, List<ServePort> ports, String phase,
                         boolean hostNetwork) {
    public SandboxPod {
        ips = List.copyOf(ips);
        ports = List.copyOf(ports);
    }

    /** Pods the sandbox runs: not hostNetwork (those are not endpoints) and Running (or without a status, which the sandbox makes Running). */
    public boolean runnable() {
        return !hostNetwork && (phase == null || phase.equals("Running"));
    }
}
