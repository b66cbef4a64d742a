package io.kubeverdict.agent.run;

import io.kubeverdict.agent.nft.QueuePath;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import io.kubeverdict.agent.sync.ControlPlaneChannel;

/**
 * Everything the agent process is told at start.
 *
 * @param controlPlane HOST:PORT of the control plane's PolicySync service
 * @param failOpen see {@link Agent} for exactly what this changes
 * @param queuePath null = detect; otherwise force the nft queue expression or the xtables target
 * @param metricsListen null = no metrics server
 * @param inspectListen null = no inspection server
 * @param tls null = plaintext
 * @param tokenFile the projected ServiceAccount token sent on every call; null = none
 */
public record AgentConfig(String node, String controlPlane, boolean failOpen, int queueId, QueuePath queuePath,
                          String table, InetSocketAddress metricsListen, InetSocketAddress inspectListen, ControlPlaneChannel.Tls tls,
                          boolean removeTableOnExit, Path tokenFile) {

    public AgentConfig {
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("a node name is required");
        }
        if (controlPlane == null || controlPlane.isBlank()) {
            throw new IllegalArgumentException("--control-plane HOST:PORT is required");
        }
        if (queueId < 0 || queueId > 65535) {
            throw new IllegalArgumentException("--nfqueue-id must be 0..65535, got " + queueId);
        }
    }
}
