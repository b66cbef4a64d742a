package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * A node whose sets changed is rebuilt from its previous snapshot with only the changed set
 * protos replaced. Random sequences of cluster changes (mostly ones that change only the members
 * of sets other nodes use: a pod's labels, a Node's labels, a namespace's labels; also pods,
 * policies and admin-tier policies replaced or deleted), with drains at random points and only
 * some nodes' snapshots asked for after each change, so that a node may go through several set
 * changes, or a drain, before it is built again. After every change the snapshots asked for, and
 * at the end every node's, must equal (as messages and byte for byte) those of a calculator fed
 * the same objects from scratch; at a drain, a node whose snapshot differs from the one last
 * seen must have been reported.
 */
class IncrementalRebuildTest {
    private static final List<String> NODE_NAMES = List.of("node0", "node1", "node2");

    /** The cluster's current objects, by kind and key, as a from-scratch calculation is fed them. */
    private final Map<String, Namespace> namespaces = new TreeMap<>();
    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final Map<String, Node> nodes = new TreeMap<>();
    private final Map<String, GenericKubernetesResource> adminPolicies = new TreeMap<>();

    @Test
    void incrementalSnapshotsEqualAFullRecalculationAfterEveryChange() {
        for (long seed = 1; seed <= 300; seed++) {
            run(seed, 40);
        }
    }

    private void run(long seed, int steps) {
        namespaces.clear();
        pods.clear();
        policies.clear();
        nodes.clear();
        adminPolicies.clear();
        RandomAdminCluster c = new RandomAdminCluster(seed);
        Random r = new Random(seed * 31 + 7);
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        c.namespaces.forEach(n -> apply(calc, n));
        c.pods.forEach(p -> apply(calc, p));
        c.policies.forEach(p -> apply(calc, p));
        c.nodes.forEach(n -> apply(calc, n));
        c.adminPolicies.forEach(p -> apply(calc, p));

        Map<String, NodeSnapshot> seen = new HashMap<>();
        Set<String> reported = new TreeSet<>();
        calc.drainChangedNodes();
        for (String node : NODE_NAMES) {
            seen.put(node, calc.snapshot(node));
        }
        for (int step = 0; step < steps; step++) {
            String what = change(c, r, calc, step);
            String as = "seed " + seed + ", step " + step + " (" + what + ")";
            boolean drained = r.nextInt(2) == 0;
            if (drained) {
                reported.addAll(calc.drainChangedNodes());
            }
            IncrementalPolicyCalculator fresh = fresh();
            for (String node : NODE_NAMES) {
                if (r.nextInt(3) != 0) {
                    continue; // not asked for: it may go through more changes before it is built
                }
                NodeSnapshot got = calc.snapshot(node);
                assertEqual(got, fresh.snapshot(node), as + ", " + node);
                if (drained && !got.equals(seen.get(node))) {
                    assertThat(reported).as("%s: %s changed but was not reported", as, node).contains(node);
                }
                seen.put(node, got);
                reported.remove(node);
            }
        }
        IncrementalPolicyCalculator fresh = fresh();
        assertThat(calc.nodes()).as("seed %d", seed).isEqualTo(fresh.nodes());
        reported.addAll(calc.drainChangedNodes());
        for (String node : NODE_NAMES) {
            NodeSnapshot got = calc.snapshot(node);
            assertEqual(got, fresh.snapshot(node), "seed " + seed + ", end, " + node);
            if (!got.equals(seen.get(node))) {
                assertThat(reported).as("seed %d, end: %s changed but was not reported", seed, node).contains(node);
            }
        }
    }

    private static void assertEqual(NodeSnapshot got, NodeSnapshot want, String as) {
        assertThat(got).as(as).isEqualTo(want);
        assertThat(got.toByteString()).as(as).isEqualTo(want.toByteString());
    }

    /** One random change, applied to {@code calc} and to the objects; returns what it was. */
    private String change(RandomAdminCluster c, Random r, IncrementalPolicyCalculator calc, int step) {
        RandomCluster base = c.base();
        int kind = r.nextInt(12);
        if (kind <= 3 && !pods.isEmpty()) {
            // Only the labels: the pod's own node changes, the others only in the sets' members.
            Pod old = pick(pods, r);
            Pod relabelled = new PodBuilder(old).editMetadata()
                    .withLabels(base.mutate(old, step).getMetadata().getLabels()).endMetadata().build();
            apply(calc, relabelled);
            return "pod labels " + key(old);
        }
        if (kind <= 5) {
            // Node labels (nodes peers' sets) or a Node going away.
            int i = r.nextInt(NODE_NAMES.size());
            if (r.nextInt(4) == 0 && nodes.containsKey(NODE_NAMES.get(i))) {
                nodes.remove(NODE_NAMES.get(i));
                calc.deleteNode(NODE_NAMES.get(i));
                return "node deleted " + i;
            }
            apply(calc, c.node(i));
            return "node " + i;
        }
        if (kind == 6 && !namespaces.isEmpty()) {
            Namespace n = base.mutate(pick(namespaces, r));
            apply(calc, n);
            return "namespace labels " + n.getMetadata().getName();
        }
        if (kind == 7 && !pods.isEmpty()) {
            Pod old = pick(pods, r);
            if (r.nextInt(3) == 0) {
                pods.remove(key(old));
                calc.deletePod(old.getMetadata().getNamespace(), old.getMetadata().getName());
                return "pod deleted " + key(old);
            }
            Pod p = base.mutate(old, 100 + step);
            apply(calc, p);
            return "pod replaced " + key(p);
        }
        if (kind == 8 && !namespaces.isEmpty()) {
            String ns = pick(namespaces, r).getMetadata().getName();
            Pod p = base.pod(ns, "q" + step, 200 + step);
            apply(calc, p);
            return "pod added " + key(p);
        }
        if (kind == 9 && !policies.isEmpty()) {
            NetworkPolicy old = pick(policies, r);
            String ns = old.getMetadata().getNamespace();
            String name = old.getMetadata().getName();
            if (r.nextInt(3) == 0) {
                policies.remove(ns + "/" + name);
                calc.deletePolicy(ns, name);
                return "policy deleted " + ns + "/" + name;
            }
            apply(calc, base.policy(ns, name));
            return "policy replaced " + ns + "/" + name;
        }
        if (kind == 10 && !adminPolicies.isEmpty()) {
            GenericKubernetesResource old = pick(adminPolicies, r);
            if (r.nextInt(3) == 0) {
                adminPolicies.remove(adminKey(old));
                calc.deleteAdminPolicy(AdminPolicyKind.byKindName(old.getKind()), old.getMetadata().getName());
                return "admin policy deleted " + adminKey(old);
            }
            apply(calc, c.mutate(old));
            return "admin policy replaced " + adminKey(old);
        }
        if (!namespaces.isEmpty()) {
            String ns = pick(namespaces, r).getMetadata().getName();
            apply(calc, base.policy(ns, "np-new" + step));
            return "policy added " + ns + "/np-new" + step;
        }
        return "nothing";
    }

    private static <T> T pick(Map<String, T> m, Random r) {
        return new ArrayList<>(m.values()).get(r.nextInt(m.size()));
    }

    private static String key(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }

    private static String adminKey(GenericKubernetesResource g) {
        return g.getKind() + "/" + g.getMetadata().getName();
    }

    private void apply(IncrementalPolicyCalculator calc, Namespace n) {
        namespaces.put(n.getMetadata().getName(), n);
        calc.upsertNamespace(n);
    }

    private void apply(IncrementalPolicyCalculator calc, Pod p) {
        pods.put(key(p), p);
        calc.upsertPod(p);
    }

    private void apply(IncrementalPolicyCalculator calc, NetworkPolicy p) {
        policies.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
        calc.upsertPolicy(p);
    }

    private void apply(IncrementalPolicyCalculator calc, Node n) {
        nodes.put(n.getMetadata().getName(), n);
        calc.upsertNode(n);
    }

    private void apply(IncrementalPolicyCalculator calc, GenericKubernetesResource g) {
        adminPolicies.put(adminKey(g), g);
        calc.upsertAdminPolicy(g);
    }

    /** A calculator fed the current objects from scratch. */
    private IncrementalPolicyCalculator fresh() {
        IncrementalPolicyCalculator f = new IncrementalPolicyCalculator();
        namespaces.values().forEach(f::upsertNamespace);
        policies.values().forEach(f::upsertPolicy);
        pods.values().forEach(f::upsertPod);
        nodes.values().forEach(f::upsertNode);
        adminPolicies.values().forEach(f::upsertAdminPolicy);
        return f;
    }
}
