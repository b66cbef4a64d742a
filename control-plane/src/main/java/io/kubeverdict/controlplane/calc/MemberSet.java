// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * One live IP set in {@link ClusterIndex}, whatever its members come from (pods: {@link IpSetState},
 * nodes: {@link NodeSetState}): members with reference counts (two objects may report one
 * address) and the policies using it (the set lives while one does). Mutated by the index only.
 */
abstract class MemberSet {
    final String id;
    final Set<PolicyState> users = new HashSet<>();
    /** Member -> how many objects contribute it; sorted, as the snapshot lists members. */
    final TreeMap<String, Integer> members = new TreeMap<>();
    /**
     * When the members last changed, as a count of {@link NodeSnapshots}' set changes: a node
     * snapshot built before that lists a stale proto of this set (assembly bookkeeping).
     */
    long membersChangedAt;

    MemberSet(String id) {
        this.id = id;
    }

    abstract IpSetType type();

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
        return IpSet.newBuilder()
                .setId(id)
                .setType(type())
                .addAllMembers(members.keySet())
                .build();
    }
}
