// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testbed.ServePort;
import java.util.ArrayList;
import java.util.List;

/**
 * What the sandbox needs to know of one Pod manifest. node and ips are empty when the manifest
 * leaves them to the sandbox (ips in canonical form); phase is null when the manifest has no status.
 */
public record SandboxPod(
        String name, String node, List<String> ips, List<ServePort> ports, String phase, boolean hostNetwork) {
    public SandboxPod {
        ips = List.copyOf(ips);
        ports = List.copyOf(ports);
    }

    /**
     * Reads a Pod of the typed model; "namespace/name" with namespace "default" when it has none,
     * like the manifest loader.
     *
     * @throws IllegalArgumentException for an address that is not an IP literal or a protocol
     *     other than TCP, UDP and SCTP: the sandbox would run something else than the engine sees
     */
    public static SandboxPod of(Pod pod) {
        String namespace = pod.getMetadata().getNamespace();
        String name = (namespace == null || namespace.isEmpty() ? "default" : namespace) + "/"
                + pod.getMetadata().getName();
        List<ServePort> ports = new ArrayList<>();
        String node = null;
        boolean hostNetwork = false;
        if (pod.getSpec() != null) {
            node = pod.getSpec().getNodeName();
            hostNetwork = Boolean.TRUE.equals(pod.getSpec().getHostNetwork());
            for (Container c : pod.getSpec().getContainers() == null
                    ? List.<Container>of()
                    : pod.getSpec().getContainers()) {
                for (ContainerPort port : c.getPorts() == null ? List.<ContainerPort>of() : c.getPorts()) {
                    if (port.getContainerPort() != null) {
                        ports.add(new ServePort(
                                port.getContainerPort(),
                                port.getProtocol() == null
                                        ? Protocol.TCP
                                        : ServePort.parseProtocol(port.getProtocol())));
                    }
                }
            }
        }
        List<String> ips = new ArrayList<>();
        String phase = null;
        if (pod.getStatus() != null) {
            phase = pod.getStatus().getPhase();
            for (PodIP ip : pod.getStatus().getPodIPs() == null
                    ? List.<PodIP>of()
                    : pod.getStatus().getPodIPs()) {
                ips.add(literal(name, ip.getIp()));
            }
            if (ips.isEmpty()
                    && pod.getStatus().getPodIP() != null
                    && !pod.getStatus().getPodIP().isEmpty()) {
                ips.add(literal(name, pod.getStatus().getPodIP()));
            }
        }
        return new SandboxPod(name, node == null || node.isEmpty() ? null : node, ips, ports, phase, hostNetwork);
    }

    private static String literal(String pod, String text) {
        IpAddress ip = IpAddress.tryParse(text);
        if (ip == null) {
            throw new IllegalArgumentException("pod " + pod + ": status address \"" + text + "\" is not an IP address");
        }
        return ip.toString();
    }

    /**
     * Pods the sandbox runs as network namespaces: the endpoints, i.e. not hostNetwork and not
     * terminal (a Pending pod runs its init containers and sidecars on its address).
     */
    public boolean runnable() {
        return !hostNetwork && PodModel.live(phase);
    }
}
