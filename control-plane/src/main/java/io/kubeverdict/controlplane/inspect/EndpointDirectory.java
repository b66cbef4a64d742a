// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import io.kubeverdict.controlplane.sync.IndexedSnapshot;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Where each endpoint lives, built from the published snapshots: pod name -> endpoint, IP -> node. */
public final class EndpointDirectory {
    public record Located(String node, Endpoint endpoint) {}

    private final Map<String, Located> byName = new HashMap<>();
    private final Map<String, Located> byIp = new HashMap<>();

    public EndpointDirectory(List<IndexedSnapshot> snapshots) {
        for (IndexedSnapshot s : snapshots) {
            for (Endpoint e : s.endpoints().values()) {
                Located l = new Located(s.node(), e);
                byName.put(name(e.getId()), l);
                for (String ip : e.getEndpoint().getIpsList()) {
                    byIp.put(ip, l);
                }
            }
        }
    }

    public Optional<Located> byName(String namespacedName) {
        return Optional.ofNullable(byName.get(namespacedName));
    }

    public Optional<Located> byIp(String ip) {
        return Optional.ofNullable(byIp.get(ip));
    }

    static String name(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }
}
