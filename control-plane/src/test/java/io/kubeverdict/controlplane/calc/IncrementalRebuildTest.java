// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.calc.RandomChanges.adminKey;
import static io.kubeverdict.controlplane.calc.RandomChanges.key;
import static io.kubeverdict.controlplane.calc.RandomChanges.pick;
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
 * changes, or drains, before it is built again. After every change the snapshots asked for, and
 * at the end every node's, must equal (as messages and byte for byte) those of a calculator fed
 * the same objects from scratch, in a random order of its own; a drain must report every node
 * whose from-scratch snapshot differs from its from-scratch snapshot at the previous drain. And
 * the parts nodes share are shared: after every change, each set and each policy that several
 * nodes list is one proto instance in all their snapshots (computed once, so the sync layer,
 * which memoises set messages by instance, also serialises it once). A second calculator fed the
 * same changes is drained with {@link PolicyCalculator#drainChanges} only, its output applied as
 * a subscriber does (named nodes rebuilt, the changed sets replaced in every other node's
 * previous snapshot): that too must equal the from-scratch snapshots. A node whose endpoints or
 * their policies changed is assembled again from its previous parts, changed by the pods that
 * changed: those assemblies are among the snapshots compared, and none may find its previous
 * parts not fitting the index (counted, then assembled from scratch).
 */
class IncrementalRebuildTest {
    private static final List<String> NODE_NAMES = List.of("node0", "node1", "node2");

    /** The cluster's current objects, by kind and key, as a from-scratch calculation is fed them. */
    private final Map<String, Namespace> namespaces = new TreeMap<>();

    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final Map<String, Node> nodes = new TreeMap<>();
    private final Map<String, GenericKubernetesResource> adminPolicies = new TreeMap<>();
    /** Orders the from-scratch calculations' objects. */
    private Random order;
    /**
     * Fed the same changes, drained with {@link PolicyCalculator#drainChanges} only: what a
     * subscriber that applies shared set changes to the snapshots it has would hold.
     */
    private IncrementalPolicyCalculator viaSets;

    private final Map<String, NodeSnapshot> publishedViaSets = new HashMap<>();
    /** The content each drain of {@link #viaSets} reported per live set, and the members its deltas give. */
    private final Map<String, SetVersion> reportedSets = new HashMap<>();

    private final Map<String, TreeSet<String>> membersByDeltas = new HashMap<>();

    @Test
    void incrementalSnapshotsEqualAFullRecalculationAfterEveryChange() {
        for (long seed = 1; seed <= 120; seed++) {
            run(seed, 30);
        }
        assertThat(reassemblies)
                .as("nodes assembled again from their previous parts")
                .isPositive();
    }

    /** Over all runs: assemblies that started from a node's previous parts (so the runs check them). */
    private int reassemblies;

    private void run(long seed, int steps) {
        namespaces.clear();
        pods.clear();
        policies.clear();
        nodes.clear();
        adminPolicies.clear();
        staging = new Random(seed * 17 + 3);
        RandomAdminCluster c = new RandomAdminCluster(seed);
        Random r = new Random(seed * 31 + 7);
        order = new Random(seed);
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        viaSets = new IncrementalPolicyCalculator();
        publishedViaSets.clear();
        reportedSets.clear();
        membersByDeltas.clear();
        c.namespaces.forEach(n -> apply(calc, n));
        c.pods.forEach(p -> apply(calc, p));
        c.policies.forEach(p -> apply(calc, p));
        c.nodes.forEach(n -> apply(calc, n));
        c.adminPolicies.forEach(p -> apply(calc, p));

        calc.drainChangedNodes();
        NODE_NAMES.forEach(calc::snapshot);
        Map<String, NodeSnapshot> atLastDrain = snapshots(fresh());
        publishViaSets("seed " + seed + ", load");
        for (int step = 0; step < steps; step++) {
            String what = change(c, r, calc, step);
            String as = "seed " + seed + ", step " + step + " (" + what + ")";
            IncrementalPolicyCalculator fresh = fresh();
            if (r.nextInt(2) == 0) {
                atLastDrain = assertDrainReportsChanges(calc, fresh, atLastDrain, as);
            }
            for (String node : NODE_NAMES) {
                if (r.nextInt(3) == 0) { // the others may go through more changes before they are built
                    assertEqual(calc.snapshot(node), fresh.snapshot(node), as + ", " + node);
                }
            }
            if (r.nextInt(4) == 0) {
                assertSharedPartsAreOneInstance(calc, as);
            }
            if (r.nextInt(2) == 0) {
                assertEqualSnapshots(publishViaSets(as), fresh, as + ", via set changes");
                assertDeltasKeptTheMembers(fresh, as);
            }
        }
        IncrementalPolicyCalculator fresh = fresh();
        assertThat(calc.nodes()).as("seed %d", seed).isEqualTo(fresh.nodes());
        assertDrainReportsChanges(calc, fresh, atLastDrain, "seed " + seed + ", end");
        for (String node : NODE_NAMES) {
            assertEqual(calc.snapshot(node), fresh.snapshot(node), "seed " + seed + ", end, " + node);
        }
        assertSharedPartsAreOneInstance(calc, "seed " + seed + ", end");
        assertEqualSnapshots(
                publishViaSets("seed " + seed + ", end"), fresh, "seed " + seed + ", end, via set changes");
        assertDeltasKeptTheMembers(fresh, "seed " + seed + ", end");
        reassemblies += calc.reassemblies() + viaSets.reassemblies();
        assertThat(calc.partsMismatches() + viaSets.partsMismatches())
                .as("seed %d: nodes reassembled from scratch because their kept lists did not fit", seed)
                .isZero();
    }

    /**
     * Drains {@link #viaSets} with drainChanges and brings {@link #publishedViaSets} up to date
     * as the hub does: the nodes named get their publishable snapshot, and in every node each
     * listed set whose content a drain reported is that content (the publishable snapshot may
     * list an earlier one). Each drained change must start at the content the previous one
     * reported, and its added and removed members must take that content to the new one
     * (checked on {@link #membersByDeltas}, a copy kept by deltas alone, against the
     * from-scratch sets); a set's proto is one instance for every node.
     */
    private Map<String, NodeSnapshot> publishViaSets(String as) {
        PolicyCalculator.Changes changes = viaSets.drainChanges();
        changes.droppedSets().forEach(id -> {
            reportedSets.remove(id);
            membersByDeltas.remove(id);
        });
        for (SetChange change : changes.sets()) {
            SetVersion before = reportedSets.put(change.id(), change.to());
            TreeSet<String> members = membersByDeltas.get(change.id());
            if (change.from() == null || members == null) {
                membersByDeltas.put(
                        change.id(), new TreeSet<>(change.to().proto().getMembersList()));
                continue;
            }
            assertThat(change.from())
                    .as("%s: %s changes from what was reported", as, change.id())
                    .isSameAs(before);
            assertThat(members)
                    .as("%s: %s removes members it has", as, change.id())
                    .containsAll(change.removed());
            assertThat(java.util.Collections.disjoint(members, change.added()))
                    .as("%s: %s adds only new members", as, change.id())
                    .isTrue();
            change.removed().forEach(members::remove);
            members.addAll(change.added());
        }
        for (String node : NODE_NAMES) {
            NodeSnapshot previous = changes.nodes().contains(node)
                    ? viaSets.publishableSnapshot(node)
                    : publishedViaSets.getOrDefault(
                            node, NodeSnapshot.newBuilder().setNode(node).build());
            NodeSnapshot.Builder b = previous.toBuilder();
            for (int i = 0; i < previous.getIpSetsCount(); i++) {
                SetVersion reported = reportedSets.get(previous.getIpSets(i).getId());
                if (reported != null) {
                    b.setIpSets(i, reported.proto());
                }
            }
            publishedViaSets.put(node, b.build());
        }
        return publishedViaSets;
    }

    /** Every set of the from-scratch snapshots that deltas kept has the from-scratch members. */
    private void assertDeltasKeptTheMembers(IncrementalPolicyCalculator fresh, String as) {
        for (String node : NODE_NAMES) {
            for (var set : fresh.snapshot(node).getIpSetsList()) {
                TreeSet<String> members = membersByDeltas.get(set.getId());
                if (members != null) {
                    assertThat(members)
                            .as("%s: %s kept by deltas", as, set.getId())
                            .containsExactlyElementsOf(set.getMembersList());
                }
            }
        }
    }

    private static void assertEqualSnapshots(
            Map<String, NodeSnapshot> got, IncrementalPolicyCalculator fresh, String as) {
        for (String node : NODE_NAMES) {
            assertEqual(got.get(node), fresh.snapshot(node), as + ", " + node);
        }
    }

    /** Every node's current snapshot lists a set or policy that another node lists too as the same instance. */
    private static void assertSharedPartsAreOneInstance(IncrementalPolicyCalculator calc, String as) {
        Map<String, Object> seen = new HashMap<>();
        for (String node : NODE_NAMES) {
            NodeSnapshot s = calc.snapshot(node);
            for (var set : s.getIpSetsList()) {
                Object first = seen.putIfAbsent("set " + set.getId(), set);
                assertThat(first == null || first == set)
                        .as("%s: set %s of %s is a copy of another node's", as, set.getId(), node)
                        .isTrue();
            }
            for (var policy : s.getPoliciesList()) {
                Object first = seen.putIfAbsent("policy " + policy.getId(), policy);
                assertThat(first == null || first == policy)
                        .as("%s: policy %s of %s is a copy of another node's", as, policy.getId(), node)
                        .isTrue();
            }
        }
    }

    /**
     * Drains {@code calc}: every node whose correct snapshot (the from-scratch one) differs from
     * its correct snapshot at the previous drain must be reported, whether or not it was built
     * since. Returns the correct snapshots at this drain.
     */
    private static Map<String, NodeSnapshot> assertDrainReportsChanges(
            IncrementalPolicyCalculator calc,
            IncrementalPolicyCalculator fresh,
            Map<String, NodeSnapshot> atLastDrain,
            String as) {
        Set<String> reported = calc.drainChangedNodes();
        Map<String, NodeSnapshot> now = snapshots(fresh);
        for (String node : NODE_NAMES) {
            if (!now.get(node).equals(atLastDrain.get(node))) {
                assertThat(reported)
                        .as("%s: %s changed but was not reported", as, node)
                        .contains(node);
            }
        }
        return now;
    }

    private static Map<String, NodeSnapshot> snapshots(IncrementalPolicyCalculator calc) {
        Map<String, NodeSnapshot> out = new HashMap<>();
        NODE_NAMES.forEach(n -> out.put(n, calc.snapshot(n)));
        return out;
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
            Pod relabelled = new PodBuilder(old)
                    .editMetadata()
                    .withLabels(base.mutate(old, step).getMetadata().getLabels())
                    .endMetadata()
                    .build();
            apply(calc, relabelled);
            return "pod labels " + key(old);
        }
        if (kind <= 5) {
            // Node labels (nodes peers' sets) or a Node going away.
            int i = r.nextInt(NODE_NAMES.size());
            if (r.nextInt(4) == 0 && nodes.containsKey(NODE_NAMES.get(i))) {
                nodes.remove(NODE_NAMES.get(i));
                calc.deleteNode(NODE_NAMES.get(i));
                viaSets.deleteNode(NODE_NAMES.get(i));
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
                calc.deletePod(
                        old.getMetadata().getNamespace(), old.getMetadata().getName());
                viaSets.deletePod(
                        old.getMetadata().getNamespace(), old.getMetadata().getName());
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
                viaSets.deletePolicy(ns, name);
                return "policy deleted " + ns + "/" + name;
            }
            apply(calc, base.policy(ns, name));
            return "policy replaced " + ns + "/" + name;
        }
        if (kind == 10 && !adminPolicies.isEmpty()) {
            GenericKubernetesResource old = pick(adminPolicies, r);
            if (r.nextInt(3) == 0) {
                adminPolicies.remove(adminKey(old));
                calc.deleteAdminPolicy(
                        AdminPolicyKind.byKindName(old.getKind()),
                        old.getMetadata().getName());
                viaSets.deleteAdminPolicy(
                        AdminPolicyKind.byKindName(old.getKind()),
                        old.getMetadata().getName());
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

    private void apply(IncrementalPolicyCalculator calc, Namespace n) {
        namespaces.put(n.getMetadata().getName(), n);
        calc.upsertNamespace(n);
        viaSets.upsertNamespace(n);
    }

    private void apply(IncrementalPolicyCalculator calc, Pod p) {
        pods.put(key(p), p);
        calc.upsertPod(p);
        viaSets.upsertPod(p);
    }

    /** Stages some policies (a fifth), half of those replacing another of their namespace or kind. */
    private Random staging = new Random(0);

    private Map<String, String> stagedAnnotations(List<String> replaceable) {
        if (staging.nextInt(5) != 0) {
            return Map.of();
        }
        if (replaceable.isEmpty() || staging.nextBoolean()) {
            return Map.of("kube-verdict.io/staged", "true");
        }
        return Map.of(
                "kube-verdict.io/staged",
                "true",
                "kube-verdict.io/staged-replaces",
                replaceable.get(staging.nextInt(replaceable.size())));
    }

    private void apply(IncrementalPolicyCalculator calc, NetworkPolicy original) {
        String ns = original.getMetadata().getNamespace();
        List<String> sameNamespace = policies.values().stream()
                .filter(q -> ns.equals(q.getMetadata().getNamespace()))
                .map(q -> q.getMetadata().getName())
                .sorted()
                .toList();
        NetworkPolicy p = new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder(original)
                .editMetadata()
                .withAnnotations(stagedAnnotations(sameNamespace))
                .endMetadata()
                .build();
        policies.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
        calc.upsertPolicy(p);
        viaSets.upsertPolicy(p);
    }

    private void apply(IncrementalPolicyCalculator calc, Node n) {
        nodes.put(n.getMetadata().getName(), n);
        calc.upsertNode(n);
        viaSets.upsertNode(n);
    }

    private void apply(IncrementalPolicyCalculator calc, GenericKubernetesResource original) {
        List<String> sameKind = adminPolicies.values().stream()
                .filter(q -> q.getKind().equals(original.getKind()))
                .map(q -> q.getMetadata().getName())
                .sorted()
                .toList();
        GenericKubernetesResource g = new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder(original)
                .editMetadata()
                .withAnnotations(stagedAnnotations(sameKind))
                .endMetadata()
                .build();
        adminPolicies.put(adminKey(g), g);
        calc.upsertAdminPolicy(g);
        viaSets.upsertAdminPolicy(g);
    }

    /** A calculator fed the current objects from scratch, all kinds mixed in a random order. */
    private IncrementalPolicyCalculator fresh() {
        IncrementalPolicyCalculator f = new IncrementalPolicyCalculator();
        List<Runnable> events = new ArrayList<>();
        namespaces.values().forEach(n -> events.add(() -> f.upsertNamespace(n)));
        policies.values().forEach(p -> events.add(() -> f.upsertPolicy(p)));
        pods.values().forEach(p -> events.add(() -> f.upsertPod(p)));
        nodes.values().forEach(n -> events.add(() -> f.upsertNode(n)));
        adminPolicies.values().forEach(p -> events.add(() -> f.upsertAdminPolicy(p)));
        java.util.Collections.shuffle(events, order);
        events.forEach(Runnable::run);
        return f;
    }
}
