package io.kubeverdict.controlplane.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Protocol;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "explain", mixinStandardHelpOptions = true,
        description = "Explain the verdict for one connection, from manifests.")
final class ExplainCommand implements Callable<Integer> {
    enum Output { text, json }

    @Mixin
    OfflineInput input;

    @Option(names = "--from", required = true, paramLabel = "ns/pod|IP",
            description = "Source pod (a hostNetwork pod stands for its node's address) or address.")
    String from;

    @Option(names = "--to", required = true, paramLabel = "ns/pod|IP",
            description = "Destination pod (a hostNetwork pod stands for its node's address) or address.")
    String to;

    @Option(names = "--port", required = true, paramLabel = "P", description = "Destination port (0 for ICMP).")
    int port;

    @Option(names = "--protocol", required = true, paramLabel = "PROTO",
            description = "TCP, UDP, SCTP, ICMP, ICMPv6 or an IANA protocol number.")
    String protocol;

    @Option(names = "--output", defaultValue = "text", description = "text or json (default: ${DEFAULT-VALUE}).")
    Output output;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        try {
            return run();
        } catch (OutOfMemoryError e) {
            return OutOfMemory.report(spec.commandLine().getErr(), input.describeForMemory());
        }
    }

    private int run() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int proto = protocolNumber(protocol);
        if (proto < 0) {
            err.println("--protocol: unknown protocol " + protocol);
            return 2;
        }
        if (port < 0 || port > 65535) {
            err.println("--port must be 0-65535");
            return 2;
        }
        OfflineInput.Loaded loaded;
        try {
            loaded = input.load(err);
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return 2;
        }
        OfflineCluster cluster = loaded.cluster();
        String[] ips;
        try {
            ips = addresses(cluster);
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            return 2;
        }
        Explanation e = cluster.explain(ips[0], ips[1], proto, port);
        if (output == Output.json) {
            try {
                out.println(JsonFormat.printer().omittingInsignificantWhitespace().print(e));
            } catch (InvalidProtocolBufferException ex) {
                throw new IllegalStateException(ex);
            }
        } else {
            out.print(text(e, cluster));
        }
        out.flush();
        err.flush();
        return 0;
    }

    private String[] addresses(OfflineCluster cluster) throws OfflineInput.FatalInput {
        Optional<String> fromIp = IpAddress.canonical(from);
        Optional<String> toIp = IpAddress.canonical(to);
        OfflineCluster.Member src = fromIp.isPresent() ? null : pod(cluster, "--from", from);
        OfflineCluster.Member dst = toIp.isPresent() ? null : pod(cluster, "--to", to);
        if (src != null && dst != null) {
            for (String s : src.ips()) {
                for (String d : dst.ips()) {
                    if ((s.indexOf(':') >= 0) == (d.indexOf(':') >= 0)) {
                        return new String[] {s, d};
                    }
                }
            }
            throw new OfflineInput.FatalInput(from + " and " + to + " share no address family");
        }
        String s = fromIp.orElse(null);
        String d = toIp.orElse(null);
        if (src != null) {
            s = sameFamily(src, d, "--from");
        }
        if (dst != null) {
            d = sameFamily(dst, s, "--to");
        }
        return new String[] {s, d};
    }

    /** An endpoint pod, or a hostNetwork pod (its node's address). */
    private static OfflineCluster.Member pod(OfflineCluster cluster, String option, String name) throws OfflineInput.FatalInput {
        return cluster.member(name).orElseThrow(() -> new OfflineInput.FatalInput(
                option + " " + name + ": neither an address nor a pod with an address (namespace/name)"));
    }

    private static String sameFamily(OfflineCluster.Member pod, String other, String option) throws OfflineInput.FatalInput {
        boolean v6 = other.indexOf(':') >= 0;
        for (String ip : pod.ips()) {
            if ((ip.indexOf(':') >= 0) == v6) {
                return ip;
            }
        }
        throw new OfflineInput.FatalInput(option + " " + pod.key() + " has no " + (v6 ? "IPv6" : "IPv4") + " address");
    }

    /** A name of the contract's Protocol enum (any case) or a number 0-255; -1 for anything else. */
    static int protocolNumber(String p) {
        String name = p.toUpperCase(Locale.ROOT);
        for (Protocol known : Protocol.values()) {
            if (known != Protocol.PROTOCOL_UNSPECIFIED && known != Protocol.UNRECOGNIZED && known.name().equals(name)) {
                return known.getNumber();
            }
        }
        try {
            int n = Integer.parseInt(p);
            return n >= 0 && n <= 255 ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String text(Explanation e, OfflineCluster cluster) {
        StringBuilder sb = new StringBuilder();
        String src = e.hasSource() ? e.getSource().getNamespace() + "/" + e.getSource().getPod() + " (" + e.getTuple().getSrcIp() + ")"
                : e.getTuple().getSrcIp();
        String dst = e.hasDestination() ? e.getDestination().getNamespace() + "/" + e.getDestination().getPod() + " (" + e.getTuple().getDstIp() + ")"
                : e.getTuple().getDstIp();
        sb.append(src).append(" -> ").append(dst).append(' ').append(protocolName(e.getTuple().getProtocol()))
                .append('/').append(e.getTuple().getDstPort()).append(": ")
                .append(e.getVerdict() == io.kubeverdict.proto.v1.Verdict.VERDICT_ALLOW ? "ALLOW" : "DENY").append('\n');
        sb.append("  egress  ").append(direction(e.getEgress(), cluster.nodeOf(e.getTuple().getSrcIp()))).append('\n');
        sb.append("  ingress ").append(direction(e.getIngress(), cluster.nodeOf(e.getTuple().getDstIp()))).append('\n');
        return sb.toString();
    }

    /**
     * One direction: where it was judged, whether any tier lists a policy for the pod, the
     * verdict, and the whole tier path (the tiers that passed, then what decided).
     */
    private static String direction(DirectionExplanation d, Optional<String> node) {
        if (!d.getEvaluated()) {
            return "not evaluated: " + d.getReason();
        }
        StringBuilder sb = new StringBuilder();
        sb.append("(node ").append(node.orElse("?")).append(") ");
        sb.append(d.getIsolated() ? "isolated" : "not isolated").append(", ");
        sb.append(d.getVerdict() == io.kubeverdict.proto.v1.Verdict.VERDICT_ALLOW ? "allowed" : "denied");
        if (!d.getReason().isEmpty()) {
            sb.append(": ").append(d.getReason());
        }
        return sb.toString();
    }

    private static String protocolName(int number) {
        Protocol p = Protocol.forNumber(number);
        if (p == null || p == Protocol.PROTOCOL_UNSPECIFIED) {
            return String.valueOf(number);
        }
        return p == Protocol.ICMPV6 ? "ICMPv6" : p.name();
    }
}
