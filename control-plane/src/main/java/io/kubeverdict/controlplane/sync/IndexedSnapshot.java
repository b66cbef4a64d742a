package io.kubeverdict.controlplane.sync;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One published version of a node's snapshot with its objects indexed by id, built once on the
 * event thread and shared (read-only) by every subscriber that diffs against it.
 */
public final class IndexedSnapshot {
    private final NodeSnapshot snapshot;
    private final long version;
    private final long eventTimeUnixNanos;
    private final Map<String, IpSet> ipSets;
    // Keyed by strings ("tier/name", "namespace/pod"): hashing fresh proto ids costs more.
    private final Map<String, ActivePolicy> policies;
    private final Map<String, Endpoint> endpoints;

    private IndexedSnapshot(NodeSnapshot snapshot, long version, long eventTimeUnixNanos) {
        this.snapshot = snapshot;
        this.version = version;
        this.eventTimeUnixNanos = eventTimeUnixNanos;
        Map<String, IpSet> sets = new LinkedHashMap<>();
        for (IpSet s : snapshot.getIpSetsList()) {
            sets.put(s.getId(), s);
        }
        Map<String, ActivePolicy> pols = new LinkedHashMap<>();
        for (ActivePolicy p : snapshot.getPoliciesList()) {
            pols.put(key(p.getId()), p);
        }
        Map<String, Endpoint> eps = new LinkedHashMap<>();
        for (Endpoint e : snapshot.getEndpointsList()) {
            eps.put(key(e.getId()), e);
        }
        this.ipSets = Collections.unmodifiableMap(sets);
        this.policies = Collections.unmodifiableMap(pols);
        this.endpoints = Collections.unmodifiableMap(eps);
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
        return ipSets;
    }

    /** Policies by {@link #key(PolicyId)}, in snapshot order. */
    public Map<String, ActivePolicy> policies() {
        return policies;
    }

    /** Endpoints by {@link #key(EndpointId)}, in snapshot order. */
    public Map<String, Endpoint> endpoints() {
        return endpoints;
    }

    public static String key(PolicyId id) {
        return id.getTier() + "/" + id.getName();
    }

    public static String key(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    public boolean isEmpty() {
        return ipSets.isEmpty() && policies.isEmpty() && endpoints.isEmpty();
    }
}
