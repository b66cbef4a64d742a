package io.kubeverdict.agent.run;

import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.QueuePath;
import java.net.InetSocketAddress;
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
 * @param cutAction what established connections the policy now denies get
 */
public record AgentConfig(String node, String controlPlane, boolean failOpen, int queueId, QueuePath queuePath,
                          String table, InetSocketAddress metricsListen, InetSocketAddress inspectListen, ControlPlaneChannel.Tls tls,
                          boolean removeTableOnExit, CutAction cutAction, Telemetry telemetry) {

    /**
     * What the agent tells about its verdicts.
     *
     * @param policyVerdictSeries distinct policies with their own kubeverdict_policy_verdicts_total
     *     series (later ones count as "other"); 0: no such counter
     * @param verdictUploadPerSecond most verdict events per second sent to the control plane while
     *     someone observes (kube-verdict observe); more are sampled, the rest dropped and counted
     */
    public record Telemetry(int policyVerdictSeries, int verdictUploadPerSecond) {
        public static final Telemetry DEFAULTS = new Telemetry(50, 1000);

        public Telemetry {
            if (policyVerdictSeries < 0) {
                throw new IllegalArgumentException("--policy-verdict-series must be >= 0, got " + policyVerdictSeries);
            }
            if (verdictUploadPerSecond < 0) {
                throw new IllegalArgumentException("--verdict-upload-rate must be >= 0, got " + verdictUploadPerSecond);
            }
        }
    }

    /** Established connections the policy now denies are dropped; the default telemetry. */
    public AgentConfig(String node, String controlPlane, boolean failOpen, int queueId, QueuePath queuePath,
                       String table, InetSocketAddress metricsListen, InetSocketAddress inspectListen,
                       ControlPlaneChannel.Tls tls, boolean removeTableOnExit) {
        this(node, controlPlane, failOpen, queueId, queuePath, table, metricsListen, inspectListen, tls, removeTableOnExit,
                CutAction.DROP, Telemetry.DEFAULTS);
    }

    /** With the default telemetry. */
    public AgentConfig(String node, String controlPlane, boolean failOpen, int queueId, QueuePath queuePath,
                       String table, InetSocketAddress metricsListen, InetSocketAddress inspectListen,
                       ControlPlaneChannel.Tls tls, boolean removeTableOnExit, CutAction cutAction) {
        this(node, controlPlane, failOpen, queueId, queuePath, table, metricsListen, inspectListen, tls, removeTableOnExit,
                cutAction, Telemetry.DEFAULTS);
    }

    /** Established connections the policy now denies are dropped. */
    public AgentConfig(String node, String controlPlane, boolean failOpen, int queueId, QueuePath queuePath,
                       String table, InetSocketAddress metricsListen, InetSocketAddress inspectListen,
                       ControlPlaneChannel.Tls tls, boolean removeTableOnExit, Telemetry telemetry) {
        this(node, controlPlane, failOpen, queueId, queuePath, table, metricsListen, inspectListen, tls, removeTableOnExit,
                CutAction.DROP, telemetry);
    }

    public AgentConfig {
        if (telemetry == null) {
            telemetry = Telemetry.DEFAULTS;
        }
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("a node name is required");
        }
        if (controlPlane == null || controlPlane.isBlank()) {
            throw new IllegalArgumentException("--control-plane HOST:PORT is required");
        }
        if (queueId < 0 || queueId > 65535) {
            throw new IllegalArgumentException("--nfqueue-id must be 0..65535, got " + queueId);
        }
        if (cutAction == null) {
            throw new IllegalArgumentException("a cut action is required");
        }
    }
}
