// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "explain",
        description = {
            "Explain the verdict for one connection, from manifests (--manifests DIR) or from a running control plane "
                    + "(--control-plane HOST:PORT, its published state): one line per tier visited per direction, "
                    + "what isolates each pod, the verdict once.",
            "Exit status: 0 allowed, 1 denied, 2 bad options or input, 3 when the control plane cannot be asked."
        })
final class ExplainCommand implements Callable<Integer> {
    @Mixin
    OfflineInput input;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Option(
            names = "--from",
            required = true,
            paramLabel = "ns/pod|IP",
            description = "Source pod (a hostNetwork pod stands for its node's address) or address.")
    String from;

    @Option(
            names = "--to",
            required = true,
            paramLabel = "ns/pod|IP",
            description = "Destination pod (a hostNetwork pod stands for its node's address) or address.")
    String to;

    @Option(names = "--port", required = true, paramLabel = "P", description = "Destination port (0 for ICMP).")
    int port;

    @Option(
            names = "--protocol",
            required = true,
            paramLabel = "PROTO",
            description = "TCP, UDP, SCTP, ICMP, ICMPv6 or an IANA protocol number.")
    String protocol;

    @Mixin
    NamespaceOption namespace = new NamespaceOption();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    /** An explanation and where its endpoints' addresses live. */
    private record Explained(Explanation explanation, Function<String, Optional<String>> nodeOfIp) {}

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
        try {
            int proto = PortProtocol.parse(protocol);
            if (proto < 0) {
                throw new OfflineInput.FatalInput("--protocol: unknown protocol " + protocol);
            }
            if (port < 0 || port > 65535) {
                throw new OfflineInput.FatalInput("--port must be 0-65535");
            }
            InputChoice.check(input, client);
            from = namespace.qualify(from);
            to = namespace.qualify(to);
            Explained r = input.given() ? offline(err, proto) : live(proto);
            Explanation e = r.explanation();
            out.print(
                    output.format().isTable()
                            ? ExplanationText.render(e, r.nodeOfIp())
                            : Rendering.machine(output.format(), e));
            out.flush();
            err.flush();
            return e.getVerdict() == Verdict.VERDICT_ALLOW ? ExitCodes.OK : ExitCodes.NEGATIVE;
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        }
    }

    private Explained offline(PrintWriter err, int proto) throws OfflineInput.FatalInput {
        OfflineCluster cluster = input.load(err).cluster();
        List<String> src = addresses(cluster, "--from", from);
        List<String> dst = addresses(cluster, "--to", to);
        String[] pair = pair(src, dst);
        return new Explained(cluster.explain(pair[0], pair[1], proto, port), cluster::nodeOf);
    }

    private static List<String> addresses(OfflineCluster cluster, String option, String name)
            throws OfflineInput.FatalInput {
        Optional<String> ip = IpAddress.canonical(name);
        if (ip.isPresent()) {
            return List.of(ip.get());
        }
        // An endpoint pod, or a hostNetwork pod (its node's address).
        return cluster.member(name)
                .map(OfflineCluster.Member::ips)
                .orElseThrow(() -> new OfflineInput.FatalInput(
                        option + " " + name + ": neither an address nor a pod with an address (namespace/name)"));
    }

    /** The first source address whose family the destination has too (as the matrix picks them). */
    private String[] pair(List<String> src, List<String> dst) throws OfflineInput.FatalInput {
        return OfflineCluster.addressPair(src, dst)
                .orElseThrow(() -> new OfflineInput.FatalInput(from + " and " + to + " share no address family"));
    }

    /** The control plane's Explain on its published snapshots, pods resolved as offline. */
    private Explained live(int proto) throws OfflineInput.FatalInput {
        ManagedChannel channel;
        try {
            channel = client.open();
        } catch (IllegalArgumentException | IOException e) {
            throw new OfflineInput.FatalInput(e.getMessage());
        }
        try {
            ControlPlaneInspectionBlockingStub stub = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS);
            Map<String, String> nodes = new HashMap<>();
            List<String> src = liveAddresses(stub, from, nodes);
            List<String> dst = liveAddresses(stub, to, nodes);
            String[] pair = pair(src, dst);
            Tuple tuple = Tuple.newBuilder()
                    .setSrcIp(pair[0])
                    .setDstIp(pair[1])
                    .setProtocol(proto)
                    .setDstPort(port)
                    .build();
            Explanation e =
                    stub.explain(ExplainRequest.newBuilder().setTuple(tuple).build());
            if (e.hasSource() && e.hasDestination() && e.getSource().equals(e.getDestination())) {
                e = OfflineCluster.loopback(tuple, e.getSource()); // the matrix's rule, as offline
            }
            // Addresses given directly: the node comes from the endpoint the control plane named.
            if (e.hasSource() && !nodes.containsKey(tuple.getSrcIp())) {
                liveAddresses(stub, name(e.getSource()), nodes);
            }
            if (e.hasDestination() && !nodes.containsKey(tuple.getDstIp())) {
                liveAddresses(stub, name(e.getDestination()), nodes);
            }
            return new Explained(e, ip -> Optional.ofNullable(nodes.get(ip)));
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }

    private static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    /** An address as given, or a pod's addresses from the control plane (recording ip -> node). */
    private static List<String> liveAddresses(
            ControlPlaneInspectionBlockingStub stub, String name, Map<String, String> nodes) {
        Optional<String> ip = IpAddress.canonical(name);
        if (ip.isPresent()) {
            return List.of(ip.get());
        }
        EndpointDescription d = stub.describeEndpoint(
                DescribeEndpointRequest.newBuilder().setPod(name).build());
        d.getIpsList().forEach(a -> nodes.put(a, d.getNode()));
        return d.getIpsList();
    }
}
