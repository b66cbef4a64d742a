// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One published version of a node's snapshot with its objects indexed by id, shared (read-only)
 * by every subscriber that diffs against it. The indexes are built on first use, by a sender
 * thread, so that the event thread only publishes.
 */
public final class IndexedSnapshot {
    private final NodeSnapshot snapshot;
    private final long version;
    private final long eventTimeUnixNanos;
    // Each index is built on first use, separately: a diff whose policies and endpoints are the
    // same instances as before (a set-only change) never builds those two (110 keys per node).
    private volatile Map<String, IpSet> ipSets;
    private volatile Map<String, ActivePolicy> policies;
    private volatile Map<String, Endpoint> endpoints;

    private IndexedSnapshot(NodeSnapshot snapshot, long version, long eventTimeUnixNanos) {
        this.snapshot = snapshot;
        this.version = version;
        this.eventTimeUnixNanos = eventTimeUnixNanos;
    }

    /** Keyed by strings ("tier/name", "namespace/pod"): hashing fresh proto ids costs more. */
    private static <T> Map<String, T> index(List<T> items, Function<T, String> key) {
        Map<String, T> map = new LinkedHashMap<>(Math.max(16, items.size() * 4 / 3 + 1));
        for (T item : items) {
            map.put(key.apply(item), item);
        }
        return Collections.unmodifiableMap(map);
    }

    /**
     * @param version grows with every publication (0 is the empty state a subscriber starts from)
     * @param eventTimeUnixNanos when the earliest cluster change folded into this version was seen
     */
    public static IndexedSnapshot of(NodeSnapshot snapshot, long version, long eventTimeUnixNanos) {
        return new IndexedSnapshot(snapshot, version, eventTimeUnixNanos);
    }

    public static IndexedSnapshot empty(String node) {
        return new IndexedSnapshot(NodeSnapshot.newBuilder().setNode(node).build(), 0, 0);
    }

    public NodeSnapshot snapshot() {
        return snapshot;
    }

    public String node() {
        return snapshot.getNode();
    }

    public long version() {
        return version;
    }

    public long eventTimeUnixNanos() {
        return eventTimeUnixNanos;
    }

    public Map<String, IpSet> ipSets() {
        Map<String, IpSet> m = ipSets;
        if (m == null) {
            m = index(snapshot.getIpSetsList(), IpSet::getId); // racing builders build equal maps
            ipSets = m;
        }
        return m;
    }

    /** Policies by {@link #key(PolicyId)}, in snapshot order. */
    public Map<String, ActivePolicy> policies() {
        Map<String, ActivePolicy> m = policies;
        if (m == null) {
            m = index(snapshot.getPoliciesList(), p -> key(p.getId()));
            policies = m;
        }
        return m;
    }

    /** Endpoints by {@link #key(EndpointId)}, in snapshot order. */
    public Map<String, Endpoint> endpoints() {
        Map<String, Endpoint> m = endpoints;
        if (m == null) {
            m = index(snapshot.getEndpointsList(), e -> key(e.getId()));
            endpoints = m;
        }
        return m;
    }

    /** Whether the IP-set index was built (tests check that a diff skipped it). */
    boolean ipSetsIndexed() {
        return ipSets != null;
    }

    /** Whether the policy or endpoint index was built (tests check that a diff skipped them). */
    boolean policiesOrEndpointsIndexed() {
        return policies != null || endpoints != null;
    }

    public static String key(PolicyId id) {
        return id.getTier() + "/" + id.getName();
    }

    public static String key(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    public boolean isEmpty() {
        return snapshot.getIpSetsCount() == 0
                && snapshot.getPoliciesCount() == 0
                && snapshot.getEndpointsCount() == 0
                && snapshot.getPodCidrsCount() == 0;
    }
}
