// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.List;

/** The addresses of local pods that watch DNS answers (endpoints with domain watches). Pure. */
public final class WatchedAddresses {
    private WatchedAddresses() {}

    public static PodAddresses of(NodeSnapshot snapshot) {
        List<String> ips = new ArrayList<>();
        for (Endpoint e : snapshot.getEndpointsList()) {
            if (e.getEndpoint().getDomainWatchesCount() > 0) {
                for (String ip : e.getEndpoint().getIpsList()) {
                    if (io.kubeverdict.policy.IpAddress.tryParse(ip) != null) {
                        ips.add(ip);
                    }
                }
            }
        }
        return PodAddresses.of(ips);
    }
}
