package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * One live IP set in {@link ClusterIndex}: its members with reference counts (two pods may
 * report one address) and the policies using it (the set lives while one does). Mutated by the
 * index only.
 */
final class IpSetState {
    final IpSetDef def;
    final String id;
    final Set<PolicyState> users = new HashSet<>();
    /** Member -> how many pods contribute it; sorted, as the snapshot lists members. */
    final TreeMap<String, Integer> members = new TreeMap<>();

    IpSetState(IpSetDef def) {
        this.def = def;
        this.id = def.id();
    }

    /** The members a pod gives this set, assuming the pod's namespace is in the set's scope. */
    List<String> contribution(PodModel pod) {
        if (pod == null || !pod.endpoint() || !def.podSelector().matches(pod.labels())) {
            return List.of();
        }
        if (def.portName() == null) {
            return pod.ips();
        }
        List<String> out = new ArrayList<>(2);
        for (PodModel.NamedPort np : pod.namedPorts()) {
            if (np.name().equals(def.portName()) && np.protocol() == def.protocol()) {
                String suffix = "," + IpSetDef.memberProtocol(np.protocol()) + ":" + np.port();
                for (String ip : pod.ips()) {
                    out.add(ip + suffix);
                }
            }
        }
        return out;
    }

    void addMembers(List<String> contributed) {
        for (String m : contributed) {
            members.merge(m, 1, Integer::sum);
        }
    }

    void removeMembers(List<String> contributed) {
        for (String m : contributed) {
            members.computeIfPresent(m, (k, v) -> v == 1 ? null : v - 1);
        }
    }

    IpSet toProto() {
        return IpSet.newBuilder().setId(id).setType(def.type()).addAllMembers(members.keySet()).build();
    }
}
