// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import java.util.Arrays;
import java.util.List;

/**
 * One version of a live IP set's content: immutable, safe to read on any thread, its members
 * shared in part with the set's other versions ({@link SortedMembers}). The whole {@link IpSet}
 * proto is built only when asked (a full snapshot, a set new to an agent, inspection), once per
 * version: every caller gets the same instance, which the sync layer's memo keys on.
 */
public final class SetVersion {
    private final String id;
    private final IpSetType type;
    private final SortedMembers members;
    private volatile IpSet proto;

    SetVersion(String id, IpSetType type, SortedMembers members) {
        this.id = id;
        this.type = type;
        this.members = members;
    }

    /** A version holding {@code members} (for callers outside the calculation: tests, tools). */
    public static SetVersion of(String id, IpSetType type, List<String> members) {
        String[] sorted = members.stream().distinct().sorted().toArray(String[]::new);
        return new SetVersion(id, type, SortedMembers.EMPTY.with(Arrays.asList(sorted), List.of()));
    }

    /** This set with {@code added} (ascending, not members) and without {@code removed} (ascending). */
    SetVersion with(List<String> added, List<String> removed) {
        return new SetVersion(id, type, members.with(added, removed));
    }

    public String id() {
        return id;
    }

    public IpSetType type() {
        return type;
    }

    /** Distinct members. */
    public int size() {
        return members.size();
    }

    /** The whole set as a proto, built on first use; the same instance for every caller. */
    public IpSet proto() {
        IpSet p = proto;
        if (p == null) {
            synchronized (this) {
                p = proto;
                if (p == null) {
                    p = IpSet.newBuilder()
                            .setId(id)
                            .setType(type)
                            .addAllMembers(Arrays.asList(members.toArray()))
                            .build();
                    proto = p;
                }
            }
        }
        return p;
    }

    /** The proto if some caller has built it, else null (never builds it). */
    public IpSet builtProto() {
        return proto;
    }

    @Override
    public String toString() {
        return id + " (" + members.size() + " members)";
    }
}
