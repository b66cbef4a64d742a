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
 * One published version of a node's snapshot with its objects indexed by id, shared (read-only)
 * by every subscriber that diffs against it. The index is built on first use, by a sender thread,
 * so that the event thread only publishes.
 */
public final class IndexedSnapshot {
    private final NodeSnapshot snapshot;
    private final long version;
    private final long eventTimeUnixNanos;
    private volatile Index index;

    /** Keyed by strings ("tier/name", "namespace/pod"): hashing fresh proto ids costs more. */
    private record Index(Map<String, IpSet> ipSets, Map<String, ActivePolicy> policies,
            Map<String, Endpoint> endpoints) {}

    private IndexedSnapshot(NodeSnapshot snapshot, long version, long eventTimeUnixNanos) {
        this.snapshot = snapshot;
        this.version = version;
        this.eventTimeUnixNanos = eventTimeUnixNanos;
    }

    private Index index() {
        Index i = index;
        if (i == null) {
            synchronized (this) {
                i = index;
                if (i == null) {
                    i = buildIndex(snapshot);
                    index = i;
                }
            }
        }
        return i;
    }

    private static Index buildIndex(NodeSnapshot snapshot) {
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
        return new Index(Collections.unmodifiableMap(sets), Collections.unmodifiableMap(pols),
                Collections.unmodifiableMap(eps));
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
        return index().ipSets();
    }

    /** Policies by {@link #key(PolicyId)}, in snapshot order. */
    public Map<String, ActivePolicy> policies() {
        return index().policies();
    }

    /** Endpoints by {@link #key(EndpointId)}, in snapshot order. */
    public Map<String, Endpoint> endpoints() {
        return index().endpoints();
    }

    public static String key(PolicyId id) {
        return id.getTier() + "/" + id.getName();
    }

    public static String key(EndpointId id) {
        return id.getNamespace() + "/" + id.getPod();
    }

    public boolean isEmpty() {
        return snapshot.getIpSetsCount() == 0 && snapshot.getPoliciesCount() == 0 && snapshot.getEndpointsCount() == 0;
    }
}
