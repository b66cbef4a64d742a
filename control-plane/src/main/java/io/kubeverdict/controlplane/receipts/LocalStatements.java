// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.LocalPolicyReceipt;
import io.kubeverdict.proto.v1.LocalReceipts;
import io.kubeverdict.proto.v1.PolicyNodeReceipt;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What this replica tells its peers: for each policy, what the nodes whose agents report here run.
 * Only this replica's applied reports are current for those nodes; the peers merge the answer with
 * their own ({@link ReplicaMerge}).
 */
public final class LocalStatements {
    private LocalStatements() {}

    /**
     * @param here the nodes whose agents have a stream to this replica
     * @param named the policies asked about; empty: every one
     */
    public static LocalReceipts of(
            PolicyReceipts receipts, String replica, Set<String> here, Collection<PolicyRef> named, int maxLagging) {
        LocalReceipts.Builder b = LocalReceipts.newBuilder().setReplica(replica).addAllReportingNodes(here);
        Map<String, Long> hashes = hashes(here);
        if (named.isEmpty()) {
            receipts.readAll(t -> statement(t, hashes, maxLagging)).forEach(b::addPolicies);
        } else {
            for (PolicyRef ref : named) {
                receipts.read(ref, t -> statement(t, hashes, maxLagging)).ifPresent(b::addPolicies);
            }
        }
        return b.build();
    }

    /** Each node with its name's hash. */
    static Map<String, Long> hashes(Collection<String> nodes) {
        Map<String, Long> out = new HashMap<>(nodes.size() * 4 / 3 + 1);
        for (String n : nodes) {
            out.put(n, nameHash(n));
        }
        return out;
    }

    static LocalPolicyReceipt statement(TrackedPolicy t, Map<String, Long> here, int maxLagging) {
        int count = 0;
        long digest = 0;
        List<String> lagging = new ArrayList<>();
        for (String node : t.nodes()) {
            Long hash = here.get(node);
            if (hash != null) {
                count++;
                digest += hash;
                if (t.lagging(node)) {
                    lagging.add(node);
                }
            }
        }
        LocalPolicyReceipt.Builder b = LocalPolicyReceipt.newBuilder()
                .setKind(t.ref().kind())
                .setNamespace(t.ref().namespace())
                .setName(t.ref().name())
                .setGeneration(t.generation())
                .setResourceVersion(t.resourceVersion())
                .setCalculated(t.calculated())
                .setNodes(count)
                .setNodesDigest(digest)
                .setLagging(lagging.size());
        lagging.sort(Comparator.<String>comparingLong(t::sinceUnixNanos).thenComparing(Comparator.naturalOrder()));
        for (String node : lagging.subList(0, Math.min(maxLagging, lagging.size()))) {
            b.addLaggingNodes(PolicyNodeReceipt.newBuilder()
                    .setNode(node)
                    .setSince(Timestamps.fromNanos(t.sinceUnixNanos(node))));
        }
        if (t.lastEnforcedUnixNanos() != 0) {
            b.setLastEnforced(Timestamps.fromNanos(t.lastEnforcedUnixNanos()));
        }
        return b.build();
    }

    /** A 64-bit hash of a node name; a set's digest is the sum of its members' (order-free). */
    static long nameHash(String node) {
        long h = 0xcbf29ce484222325L; // FNV-1a, then a final mix so sums of near names spread
        for (byte c : node.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (c & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        return h ^ (h >>> 33);
    }
}
