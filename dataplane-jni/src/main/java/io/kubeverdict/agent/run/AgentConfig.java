// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.nft.CacheSettings;
import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.sync.AppliedReporter;
import io.kubeverdict.agent.sync.ControlPlaneChannel;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.policy.Cidr;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything the agent process is told at start.
 *
 * @param controlPlane HOST:PORT of the control plane's PolicySync service
 * @param failOpen see {@link Agent} for exactly what this changes
 * @param queuePath null = detect; otherwise force the nft queue expression or the xtables target
 * @param metricsListen null = no metrics server
 * @param inspectListen null = no inspection server
 * @param tls null = plaintext
 * @param tokenFile the projected ServiceAccount token sent on every call (--auth token); null = none
 * @param cutAction what established connections the policy now denies get
 * @param dns the DNS answers path of domain-name rules; null = its defaults
 * @param queues verdict queues {@code queueId .. queueId + queues - 1}, one verdict thread each; the
 *     kernel sends each packet to the queue of the CPU that handles it (1..{@value #MAX_QUEUES})
 * @param state where the last enforced state is kept between runs; null = {@link State#OFF}
 * @param guard the pod address guard; null = its defaults (on, with the snapshot's pod ranges)
 * @param queueLength packets that may wait for a verdict on each verdict queue; the kernel drops the
 *     overflow (accepts it, fail-open) (1..{@value io.kubeverdict.jni.NfQueue#MAX_LENGTH})
 * @param verdictCache the kernel's verdict cache for repeated connections; null = its defaults (on)
 */
public record AgentConfig(
        String node,
        String controlPlane,
        boolean failOpen,
        int queueId,
        QueuePath queuePath,
        String table,
        InetSocketAddress metricsListen,
        InetSocketAddress inspectListen,
        ControlPlaneChannel.Tls tls,
        Path tokenFile,
        boolean removeTableOnExit,
        CutAction cutAction,
        Telemetry telemetry,
        Dns dns,
        int queues,
        State state,
        Guard guard,
        int queueLength,
        CacheSettings verdictCache) {
    /** Most queues (verdict threads) one agent runs. */
    public static final int MAX_QUEUES = 64;
    /** The default number of queues is one per CPU the agent may use, at most this many. */
    public static final int DEFAULT_MAX_QUEUES = 8;
    /**
     * Eight times the kernel's 1024: a queue absorbs a stall of the agent (a GC pause, CPU
     * throttling) of about 80 ms at 100,000 new connections per second, or a burst of that many
     * (pods reconnecting at once), before it drops or, fail-open, lets through. Its cost is kernel
     * memory only while packets wait: about 2-3 KiB per small first packet (a SYN, a short
     * datagram), so some 20 MiB per full queue; large first datagrams pin more (see operations.md).
     */
    public static final int DEFAULT_QUEUE_LENGTH = 8192;

    /** One queue per CPU this JVM may use, at most {@value #DEFAULT_MAX_QUEUES}. */
    public static int defaultQueues() {
        return Math.max(1, Math.min(DEFAULT_MAX_QUEUES, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * What the agent tells about its verdicts, and how often an idle agent says it is alive.
     *
     * @param policyVerdictSeries distinct policies with their own kubeverdict_policy_verdicts_total
     *     series (later ones count as "other"); 0: no such counter
     * @param verdictUploadPerSecond most verdict events per second sent to the control plane while
     *     someone observes (kube-verdict observe); more are sampled, the rest dropped and counted
     * @param heartbeat how long the agent stays silent before it sends a heartbeat (the control
     *     plane's last contact of the node); null: {@link AppliedReporter#DEFAULT_HEARTBEAT}
     */
    public record Telemetry(int policyVerdictSeries, int verdictUploadPerSecond, Duration heartbeat) {
        public static final Telemetry DEFAULTS = new Telemetry(50, 1000, AppliedReporter.DEFAULT_HEARTBEAT);

        public Telemetry {
            if (heartbeat == null) {
                heartbeat = AppliedReporter.DEFAULT_HEARTBEAT;
            }
            if (heartbeat.toMillis() < 100 || heartbeat.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("--heartbeat-interval must be 100ms..1h, got " + heartbeat);
            }
            if (policyVerdictSeries < 0) {
                throw new IllegalArgumentException("--policy-verdict-series must be >= 0, got " + policyVerdictSeries);
            }
            if (verdictUploadPerSecond < 0) {
                throw new IllegalArgumentException("--verdict-upload-rate must be >= 0, got " + verdictUploadPerSecond);
            }
        }
    }

    /**
     * @param queueId the NFQUEUE number DNS answers to watching pods go to
     * @param minTtlSeconds learned addresses live at least this long (an answer's TTL of 0 still lets
     *     the pod connect right after it)
     * @param maxTtlSeconds and at most this long
     * @param resolvers the DNS servers (as pods address them) whose answers teach; empty: none do
     */
    public record Dns(int queueId, long minTtlSeconds, long maxTtlSeconds, List<String> resolvers) {
        public static final long DEFAULT_MIN_TTL_SECONDS = 30;
        public static final long DEFAULT_MAX_TTL_SECONDS = 3600;

        public Dns {
            if (queueId < 0 || queueId > 65535) {
                throw new IllegalArgumentException("--dns-queue-id must be 0..65535, got " + queueId);
            }
            if (minTtlSeconds < 0 || maxTtlSeconds < minTtlSeconds || maxTtlSeconds > 7 * 24 * 3600) {
                throw new IllegalArgumentException(
                        "--dns-min-ttl/--dns-max-ttl: need 0 <= min <= max <= 604800 seconds, got " + minTtlSeconds
                                + ", " + maxTtlSeconds);
            }
            resolvers = List.copyOf(resolvers);
        }

        /** Learns from no resolver (fail-closed). */
        public Dns(int queueId, long minTtlSeconds, long maxTtlSeconds) {
            this(queueId, minTtlSeconds, maxTtlSeconds, List.of());
        }

        /** The queue right after the verdict queues, the default TTL bounds. */
        public static Dns defaults(int policyQueueId, int policyQueues) {
            return new Dns(
                    defaultQueueId(policyQueueId, policyQueues), DEFAULT_MIN_TTL_SECONDS, DEFAULT_MAX_TTL_SECONDS);
        }

        /** The first queue after {@code queueId .. queueId + queues - 1} (wrapping at 65536). */
        public static int defaultQueueId(int policyQueueId, int policyQueues) {
            return (policyQueueId + policyQueues) & 0xFFFF;
        }
    }

    /**
     * The state file: written after each enforced generation, enforced at the next start before the
     * control plane answers when it is this node's, intact and at most {@code maxAgeSeconds} old.
     *
     * @param directory null = kept nowhere (the agent starts with nothing enforced)
     */
    public record State(Path directory, long maxAgeSeconds) {
        public static final State OFF = new State(null, 0);
        public static final long DEFAULT_MAX_AGE_SECONDS = 7 * 24 * 3600;

        public State {
            if (directory != null && maxAgeSeconds <= 0) {
                throw new IllegalArgumentException("--state-max-age must be > 0 seconds, got " + maxAgeSeconds);
            }
        }

        public boolean enabled() {
            return directory != null;
        }
    }

    /**
     * The pod address guard: new connections from or to an address in the node's pod ranges that
     * the state does not know as an endpoint are held on queue {@code queueId} for at most
     * {@code holdMillis}, then judged by a state that knows the address, or dropped (fail-open:
     * accepted).
     *
     * @param podCidrs ranges besides the snapshot's (Node spec.podCIDRs), for CNIs that allocate otherwise
     */
    public record Guard(List<String> podCidrs, int queueId, long holdMillis) {
        public static final long DEFAULT_HOLD_MILLIS = 2000;

        public Guard {
            podCidrs = List.copyOf(podCidrs);
            for (String cidr : podCidrs) {
                if (Cidr.tryParse(cidr) == null) {
                    throw new IllegalArgumentException("--pod-cidr: not a CIDR: " + cidr);
                }
            }
            if (queueId < 0 || queueId > 65535) {
                throw new IllegalArgumentException("--hold-queue-id must be 0..65535, got " + queueId);
            }
            if (holdMillis < 1 || holdMillis > 60_000) {
                throw new IllegalArgumentException("--pod-guard-hold must be 1..60000 ms, got " + holdMillis);
            }
        }

        /** The first free queue after the DNS queue, nothing but the snapshot's ranges. */
        public static Guard defaults(int dnsQueueId, int queueId, int queues) {
            return new Guard(List.of(), defaultQueueId(dnsQueueId, queueId, queues), DEFAULT_HOLD_MILLIS);
        }

        /** The first number after the DNS queue that is neither it nor a verdict queue (wrapping at 65536). */
        public static int defaultQueueId(int dnsQueueId, int queueId, int queues) {
            int candidate = (dnsQueueId + 1) & 0xFFFF;
            while (candidate == dnsQueueId || (candidate >= queueId && candidate < queueId + queues)) {
                candidate = (candidate + 1) & 0xFFFF;
            }
            return candidate;
        }
    }

    /**
     * The verdict cache's defaults: on (--no-verdict-cache turns it off; while on, a killed
     * fail-closed agent's cached keys still pass for up to {@value CacheSettings#LIVENESS_SECONDS}
     * s), keys kept {@value CacheSettings#DEFAULT_TTL_SECONDS} s, {@value CacheSettings#DEFAULT_SIZE}
     * per family. Why on: docs/design/verdict-cache.md ("Default on").
     */
    public static final CacheSettings DEFAULT_VERDICT_CACHE =
            CacheSettings.on(CacheSettings.DEFAULT_TTL_SECONDS, CacheSettings.DEFAULT_SIZE);

    public AgentConfig {
        if (verdictCache == null) {
            verdictCache = DEFAULT_VERDICT_CACHE;
        }
        if (state == null) {
            state = State.OFF;
        }
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
        if (queues < 1 || queues > MAX_QUEUES || queueId + queues - 1 > 65535) {
            throw new IllegalArgumentException("--queues must be 1.." + MAX_QUEUES
                    + " with --nfqueue-id + queues - 1 <= 65535, got " + queues + " from " + queueId);
        }
        if (dns == null) {
            dns = Dns.defaults(queueId, queues);
        }
        if (dns.queueId() >= queueId && dns.queueId() < queueId + queues) {
            throw new IllegalArgumentException("--dns-queue-id must lie outside the verdict queues " + queueId + ".."
                    + (queueId + queues - 1) + ", got " + dns.queueId());
        }
        if (guard == null) {
            guard = Guard.defaults(dns.queueId(), queueId, queues);
        }
        if (queueLength < 1 || queueLength > NfQueue.MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "--queue-length must be 1.." + NfQueue.MAX_LENGTH + ", got " + queueLength);
        }
        if (guard.queueId() == dns.queueId() || (guard.queueId() >= queueId && guard.queueId() < queueId + queues)) {
            throw new IllegalArgumentException("--hold-queue-id must differ from the verdict queues " + queueId + ".."
                    + (queueId + queues - 1) + " and the DNS queue " + dns.queueId() + ", got " + guard.queueId());
        }
    }
}
