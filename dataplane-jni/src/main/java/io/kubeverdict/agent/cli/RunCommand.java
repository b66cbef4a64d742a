// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.cli;

import io.kubeverdict.agent.dns.DnsResolvers;
import io.kubeverdict.agent.nft.CacheSettings;
import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.RulesetConfig;
import io.kubeverdict.agent.run.Agent;
import io.kubeverdict.agent.run.AgentConfig;
import io.kubeverdict.agent.sync.ControlPlaneChannel;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.runtime.cli.ClientTlsOptions;
import io.kubeverdict.runtime.cli.DurationText;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.runtime.cli.InsecureOption;
import io.kubeverdict.runtime.cli.LoggingOptions;
import io.kubeverdict.runtime.cli.MetricsOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(
        name = "agent",
        mixinStandardHelpOptions = true,
        description = {
            "Enforce this node's policies: sync from the control plane, program nftables, decide queued packets.",
            "",
            "Fail-open vs fail-closed (see DESIGN.md): if the agent is killed, new connections of policy-selected "
                    + "pods are accepted unchecked with --fail-open and dropped without it, until it runs again. "
                    + "A clean stop (SIGTERM) keeps the table when fail-closed and removes it when fail-open "
                    + "(see --on-exit)."
        })
final class RunCommand implements Callable<Integer> {

    @Option(names = "--node", description = "This node's name (as the control plane knows it).")
    String node;

    @Option(names = "--hostname-override", description = "Same as --node (kube-network-policies' spelling).")
    String hostnameOverride;

    @Option(
            names = "--control-plane",
            required = true,
            paramLabel = "HOST:PORT",
            converter = HostPort.Target.class,
            description = "The control plane's PolicySync address (HOST:PORT or [IPv6]:PORT).")
    HostPort controlPlane;

    @Option(
            names = "--fail-open",
            description = "Let new connections of selected pods through while the agent is down "
                    + "or its queue is full (default: drop them).")
    boolean failOpen;

    @Option(
            names = "--on-exit",
            defaultValue = "auto",
            paramLabel = "auto|keep|remove",
            description = "What a clean stop (SIGTERM) does with the nftables table: keep it (new connections of "
                    + "selected pods are dropped until an agent is back) or remove it (nothing enforced). "
                    + "auto: keep when fail-closed, remove when fail-open (default ${DEFAULT-VALUE}).")
    String onExit;

    @Option(
            names = "--cut-action",
            defaultValue = "drop",
            paramLabel = "drop|reset|none",
            description = "What established connections get once a change makes the policy deny them: drop "
                    + "their packets, reset them (TCP; others are dropped), or none (leave them; only new "
                    + "connections are judged) (default ${DEFAULT-VALUE}).")
    String cutAction;

    @Option(
            names = "--nfqueue-id",
            defaultValue = "100",
            description = "The NFQUEUE number (default ${DEFAULT-VALUE}).")
    int queueId;

    @Option(
            names = "--queues",
            paramLabel = "N",
            description = "Verdict queues --nfqueue-id .. --nfqueue-id + N - 1, one verdict thread each; the kernel "
                    + "sends each new connection to the queue of the CPU that handles it (default: one per CPU "
                    + "the agent may use, at most " + AgentConfig.DEFAULT_MAX_QUEUES + ").")
    Integer queues;

    @Option(
            names = "--queue-length",
            defaultValue = "" + AgentConfig.DEFAULT_QUEUE_LENGTH,
            paramLabel = "N",
            description = "Packets that may wait for a verdict on each verdict queue; when a queue is full the kernel "
                    + "drops new connections' first packets (accepts them unchecked with --fail-open) "
                    + "(1.." + NfQueue.MAX_LENGTH + ", default ${DEFAULT-VALUE}).")
    int queueLength;

    @Option(
            names = "--dns-queue-id",
            paramLabel = "N",
            description = "The NFQUEUE number for DNS answers to pods with domain-name rules (default: the first "
                    + "after the verdict queues, --nfqueue-id + --queues).")
    Integer dnsQueueId;

    @Option(
            names = "--dns-min-ttl",
            defaultValue = "30s",
            paramLabel = "DURATION",
            converter = DurationText.OrSeconds.class,
            description = "An address learned from a DNS answer is allowed at least this long (30s, 1m; a bare "
                    + "number is seconds; default ${DEFAULT-VALUE}).")
    Duration dnsMinTtl;

    @Option(
            names = "--dns-max-ttl",
            defaultValue = "1h",
            paramLabel = "DURATION",
            converter = DurationText.OrSeconds.class,
            description = "... and at most this long, whatever the answer's TTL (default ${DEFAULT-VALUE}).")
    Duration dnsMaxTtl;

    @Option(
            names = "--dns-resolvers",
            defaultValue = "auto",
            paramLabel = "auto|IP[,IP...]",
            description = "The DNS servers, as pods address them (the cluster DNS Service IP, node-local DNS), "
                    + "whose answers pods learn domain names' addresses from; answers from any other server teach "
                    + "nothing. auto: the nameservers of the agent's /etc/resolv.conf (with dnsPolicy "
                    + "ClusterFirstWithHostNet, the kubelet's cluster DNS); none found: nothing is learned "
                    + "(default ${DEFAULT-VALUE}).")
    String dnsResolvers;

    @Option(
            names = "--queue-path",
            defaultValue = "auto",
            paramLabel = "auto|nft|xtables",
            description = "How packets reach the queue: nft's queue expression or the xtables NFQUEUE target "
                    + "(default: detect).")
    String queuePath;

    /** /metrics and /healthz (200 once enforcing). */
    @Mixin
    MetricsOptions metrics = new MetricsOptions(":9101");

    @Option(
            names = "--inspect-listen",
            defaultValue = "127.0.0.1:9102",
            paramLabel = "HOST:PORT",
            converter = HostPort.ListenOrOff.class,
            description =
                    "AgentInspection + health + reflection gRPC listen address (HOST:PORT, [IPv6]:PORT or :PORT); "
                            + "off disables (default ${DEFAULT-VALUE}). It has no authentication and WatchVerdicts shows the "
                            + "node's connections: an address other than loopback needs --insecure.")
    HostPort inspectListen;

    @Option(
            names = "--policy-verdict-series",
            defaultValue = "50",
            paramLabel = "N",
            description =
                    "kubeverdict_policy_verdicts_total: the first N distinct deciding policies get their own "
                            + "series, later ones count as policy=\"other\"; 0 disables the counter (default ${DEFAULT-VALUE}).")
    int policyVerdictSeries;

    @Option(
            names = "--verdict-upload-rate",
            defaultValue = "1000",
            paramLabel = "N",
            description = "kube-verdict observe: most verdicts per second sent to the control plane while someone "
                    + "observes this node (more are sampled, the rest counted as lost); 0 never sends any "
                    + "(default ${DEFAULT-VALUE}).")
    int verdictUploadRate;

    @Option(
            names = "--heartbeat-interval",
            defaultValue = "20s",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "An idle agent tells the control plane it is alive this often, so `kube-verdict status` "
                    + "shows a recent LAST CONTACT for a quiet healthy node (100ms..1h, default ${DEFAULT-VALUE}).")
    Duration heartbeatInterval;

    @Mixin
    InsecureOption insecure;

    @Option(
            names = "--table",
            defaultValue = RulesetConfig.DEFAULT_TABLE,
            hidden = true,
            description = "Name of our nftables table (tests run several agents).")
    String table;

    @Mixin
    ClientTlsOptions tlsOptions;

    @Mixin
    LoggingOptions logging = new LoggingOptions();

    @Option(
            names = "--auth",
            defaultValue = "token",
            paramLabel = "token|mtls|none",
            description = "How this agent proves its node to the control plane. token (default): the projected "
                    + "ServiceAccount token in --token-file on every call; mtls: the client certificate "
                    + "(--tls-cert/--tls-key); none.")
    String auth;

    @Option(
            names = "--token-file",
            defaultValue = "/var/run/secrets/kube-verdict/token",
            paramLabel = "FILE",
            description = "The projected ServiceAccount token (audience kube-verdict), re-read on every call so the "
                    + "kubelet's rotation is picked up. Default: ${DEFAULT-VALUE}.")
    Path tokenFile;

    @Option(
            names = "--state-dir",
            defaultValue = "/var/lib/kube-verdict",
            paramLabel = "DIR|none",
            description = "Where the last enforced state is kept (a hostPath): after a reboot or restart the agent "
                    + "enforces it before the control plane answers. none: keep nothing. Default: ${DEFAULT-VALUE}.")
    String stateDir;

    @Option(
            names = "--state-max-age",
            defaultValue = "" + AgentConfig.State.DEFAULT_MAX_AGE_SECONDS,
            paramLabel = "DURATION",
            converter = DurationText.OrSeconds.class,
            description = "A kept state older than this is not enforced at start (168h; a bare number is seconds; "
                    + "default ${DEFAULT-VALUE} s: a week).")
    Duration stateMaxAge;

    @Option(
            names = "--pod-cidr",
            paramLabel = "CIDR",
            description = "This node's pod address range, besides the Node's spec.podCIDRs the control plane sends "
                    + "(for CNIs that allocate otherwise; repeat for several). New connections of an address in "
                    + "them that the state does not know yet are held, then judged or dropped.")
    List<String> podCidrs = new ArrayList<>();

    @Option(
            names = "--hold-queue-id",
            paramLabel = "N",
            description = "The NFQUEUE number where the pod address guard holds packets (default: the first free one "
                    + "after the DNS queue).")
    Integer holdQueueId;

    @Option(
            names = "--pod-guard-hold",
            defaultValue = "" + AgentConfig.Guard.DEFAULT_HOLD_MILLIS,
            paramLabel = "MS",
            description = "How long a new connection of a pod address the state does not know yet is held before "
                    + "it is dropped (accepted with --fail-open); default ${DEFAULT-VALUE}.")
    long podGuardHold;

    @Option(
            names = "--verdict-cache",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Let the kernel accept repeated new connections with the same source, destination, protocol "
                    + "and destination port that the agent accepted under the current policy state, without "
                    + "queueing them (never denies, never decisions that used addresses learned from DNS; emptied "
                    + "before every applied change decides anything). On by default; --no-verdict-cache judges every "
                    + "new connection (while on, a killed fail-closed agent's cached keys still pass for up to 2 s).")
    boolean verdictCache;

    @Option(
            names = "--verdict-cache-ttl",
            defaultValue = "" + CacheSettings.DEFAULT_TTL_SECONDS,
            paramLabel = "SECONDS",
            description = "How long the verdict cache keeps a key from its insertion (default ${DEFAULT-VALUE}).")
    int verdictCacheTtl;

    @Option(
            names = "--verdict-cache-size",
            defaultValue = "" + CacheSettings.DEFAULT_SIZE,
            paramLabel = "N",
            description = "Most keys the verdict cache holds per address family; beyond, new keys are not "
                    + "remembered (default ${DEFAULT-VALUE}).")
    int verdictCacheSize;

    @Option(
            names = "--verdict-cache-counters",
            description = "Count each cached key's connections in the kernel (an element counter: 16 bytes per CPU "
                    + "per key), for ListCachedFlows and kubeverdict_policy_verdict_cache_hits_total. Off by default.")
    boolean verdictCacheCounters;

    @Override
    public Integer call() throws Exception {
        logging.apply();
        AgentConfig config;
        try {
            config = config();
        } catch (IllegalArgumentException e) {
            System.err.println("agent: " + e.getMessage());
            return 2;
        }
        Agent agent = Agent.start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            agent.close();
                            stopped.countDown();
                        },
                        "kv-shutdown"));
        stopped.await();
        return 0;
    }

    AgentConfig config() throws IOException {
        insecure.checkPlaintextListen("--inspect-listen", inspectListen);
        String name = node != null ? node : hostnameOverride != null ? hostnameOverride : hostname();
        ControlPlaneChannel.Tls tls = tlsOptions.enabled()
                ? new ControlPlaneChannel.Tls(
                        tlsOptions.cert(), tlsOptions.key(), tlsOptions.ca(), tlsOptions.serverName())
                : null;
        Path token = switch (auth) {
            case "token" -> {
                if (tls == null) {
                    // The token is this node's identity: it travels in plaintext only on purpose.
                    insecure.checkPlaintextTarget(
                            "--control-plane", controlPlane, "the token would travel in plaintext: " + "give --tls-ca");
                }
                yield tokenFile;
            }
            case "mtls" -> {
                if (!tlsOptions.mutual()) {
                    throw new IllegalArgumentException("--auth mtls needs --tls-cert, --tls-key and --tls-ca");
                }
                yield null;
            }
            case "none" -> null;
            default -> throw new IllegalArgumentException("--auth must be token, mtls or none, not " + auth);
        };
        int queueCount = queues != null ? queues : AgentConfig.defaultQueues();
        return new AgentConfig(
                name,
                controlPlane.toString(),
                failOpen,
                queueId,
                queuePath(queuePath),
                table,
                metrics.socketAddress(),
                inspectListen == null ? null : inspectListen.socketAddress(),
                tls,
                token,
                removeTableOnExit(onExit, failOpen),
                CutAction.parse(cutAction),
                new AgentConfig.Telemetry(policyVerdictSeries, verdictUploadRate, heartbeatInterval),
                new AgentConfig.Dns(
                        dnsQueueId != null ? dnsQueueId : AgentConfig.Dns.defaultQueueId(queueId, queueCount),
                        dnsMinTtl.toSeconds(),
                        dnsMaxTtl.toSeconds(),
                        dnsResolvers(dnsResolvers, Path.of("/etc/resolv.conf"))),
                queueCount,
                "none".equals(stateDir)
                        ? AgentConfig.State.OFF
                        : new AgentConfig.State(Path.of(stateDir), stateMaxAge.toSeconds()),
                guard(queueCount),
                queueLength,
                new CacheSettings(verdictCache, verdictCacheTtl, verdictCacheSize, verdictCacheCounters));
    }

    private AgentConfig.Guard guard(int queueCount) {
        int dnsQueue = dnsQueueId != null ? dnsQueueId : AgentConfig.Dns.defaultQueueId(queueId, queueCount);
        return new AgentConfig.Guard(
                podCidrs,
                holdQueueId != null ? holdQueueId : AgentConfig.Guard.defaultQueueId(dnsQueue, queueId, queueCount),
                podGuardHold);
    }

    /** The --dns-resolvers addresses: the list given, or (auto) resolv.conf's nameservers, or none. */
    static List<String> dnsResolvers(String value, Path resolvConf) {
        if (!"auto".equals(value)) {
            List<String> given = Arrays.stream(value.split(","))
                    .map(String::strip)
                    .filter(a -> !a.isEmpty())
                    .toList();
            DnsResolvers.of(given); // throws on a word that is not an address
            return given;
        }
        try {
            return DnsResolvers.nameservers(Files.readString(resolvConf));
        } catch (IOException e) {
            return List.of(); // learn from none; the learner says so at start
        }
    }

    static boolean removeTableOnExit(String onExit, boolean failOpen) {
        return switch (onExit) {
            case "auto" -> failOpen;
            case "keep" -> false;
            case "remove" -> true;
            default -> throw new IllegalArgumentException("--on-exit must be auto, keep or remove, not " + onExit);
        };
    }

    static QueuePath queuePath(String value) {
        return switch (value) {
            case "auto" -> null;
            case "nft" -> QueuePath.NFT_QUEUE;
            case "xtables" -> QueuePath.XT_NFQUEUE;
            default -> throw new IllegalArgumentException("--queue-path must be auto, nft or xtables, not " + value);
        };
    }

    /** The kernel's host name (this UTS namespace), like kubelet's default node name. */
    private static String hostname() throws IOException {
        return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip().toLowerCase();
    }
}
