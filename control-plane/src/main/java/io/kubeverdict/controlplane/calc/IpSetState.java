// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSetType;
import java.util.ArrayList;
import java.util.List;

/** A live set of pod addresses (or named ports) defined by an {@link IpSetDef}. */
final class IpSetState extends MemberSet {
    final IpSetDef def;

    IpSetState(IpSetDef def) {
        super(def.id());
        this.def = def;
    }

    @Override
    IpSetType type() {
        return def.type();
    }

    /** The members a pod gives this set, assuming the pod's namespace is in the set's scope. */
    List<String> contribution(PodModel pod) {
        if (pod == null || !ScopePods.matches(def, pod)) {
            return List.of();
        }
        return membersOf(pod);
    }

    /** The members a pod in the set's scope ({@link ScopePods}) gives it. */
    List<String> membersOf(PodModel pod) {
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
}
