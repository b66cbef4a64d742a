// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Linux bridges of the node whose bridged traffic bypasses the inet forward hook, where the agent
 * queues new pod connections (security audit M10). On a bridge CNI (a {@code cni0} bridge: flannel,
 * kubenet, the bridge plugin) same-node pod-to-pod traffic is bridged, not routed; it reaches the
 * IPv4 (IPv6) netfilter hooks only when br_netfilter is loaded and {@code bridge-nf-call-iptables}
 * ({@code -ip6tables}) is 1, globally ({@code /proc/sys/net/bridge}) or on the bridge
 * ({@code /sys/class/net/BR/bridge/nf_call_iptables}). Otherwise isolated pods are not enforced
 * against peers on the same bridge. A bridge without ports forwards nothing and is not listed.
 * Not detected: datapaths that bypass netfilter altogether (eBPF CNIs), other bridges (OVS).
 *
 * <p>Reads files only; a tree that cannot be read gives no finding (and {@link #problem()}).
 */
public record BridgeBlindSpots(List<String> ipv4, List<String> ipv6, boolean brNetfilterLoaded, String problem) {
    public static final Path SYS_CLASS_NET = Path.of("/sys/class/net");
    public static final Path PROC_SYS_NET_BRIDGE = Path.of("/proc/sys/net/bridge");

    public BridgeBlindSpots {
        ipv4 = List.copyOf(ipv4);
        ipv6 = List.copyOf(ipv6);
    }

    /** The node's blind spots, read from the host's /sys and /proc (the agent runs in the host network namespace). */
    public static BridgeBlindSpots detect() {
        return detect(SYS_CLASS_NET, PROC_SYS_NET_BRIDGE);
    }

    public static BridgeBlindSpots detect(Path sysClassNet, Path procSysNetBridge) {
        boolean loaded = Files.isDirectory(procSysNetBridge);
        boolean global4 = loaded && isOne(procSysNetBridge.resolve("bridge-nf-call-iptables"));
        boolean global6 = loaded && isOne(procSysNetBridge.resolve("bridge-nf-call-ip6tables"));
        List<String> blind4 = new ArrayList<>();
        List<String> blind6 = new ArrayList<>();
        TreeSet<String> bridges = new TreeSet<>();
        try (Stream<Path> links = Files.list(sysClassNet)) {
            links.filter(link -> Files.isDirectory(link.resolve("bridge")) && hasPorts(link.resolve("brif")))
                    .forEach(link -> bridges.add(link.getFileName().toString()));
        } catch (IOException | RuntimeException e) {
            return new BridgeBlindSpots(List.of(), List.of(), loaded, "cannot list " + sysClassNet + ": " + e);
        }
        for (String name : bridges) {
            Path options = sysClassNet.resolve(name).resolve("bridge");
            if (!loaded || !(global4 || isOne(options.resolve("nf_call_iptables")))) {
                blind4.add(name);
            }
            if (!loaded || !(global6 || isOne(options.resolve("nf_call_ip6tables")))) {
                blind6.add(name);
            }
        }
        return new BridgeBlindSpots(blind4, blind6, loaded, null);
    }

    /** No bridge forwards around the hooks (as far as these files tell). */
    public boolean none() {
        return ipv4.isEmpty() && ipv6.isEmpty();
    }

    /** One line for the log. */
    public String describe() {
        if (none()) {
            return problem == null ? "none" : "unknown (" + problem + ")";
        }
        String why = brNetfilterLoaded
                ? "net.bridge.bridge-nf-call-iptables/-ip6tables (or the bridge's nf_call_iptables/ip6tables) is 0"
                : "br_netfilter is not loaded";
        return "bridges whose bridged traffic skips the forward hook: IPv4 " + ipv4 + ", IPv6 " + ipv6 + " (" + why
                + "); same-node pod-to-pod traffic on them is NOT enforced. Fix: modprobe br_netfilter and set "
                + "net.bridge.bridge-nf-call-iptables=1 and net.bridge.bridge-nf-call-ip6tables=1";
    }

    private static boolean hasPorts(Path brif) {
        try (Stream<Path> ports = Files.list(brif)) {
            return ports.findAny().isPresent();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean isOne(Path file) {
        try {
            return Files.readString(file).strip().equals("1");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
