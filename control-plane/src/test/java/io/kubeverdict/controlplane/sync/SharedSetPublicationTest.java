// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Set changes published once for every node ({@link SnapshotHub#publish(List, List, long)} with
 * the calculator's {@link PolicyCalculator#drainChanges}) give exactly what publishing every
 * changed node's snapshot gives. Random clusters with the admin tiers, random changes (mostly
 * ones that change only the members of sets several nodes use), published in batches of random
 * size as the calculation loop does: after every batch each node's current snapshot in the hub
 * equals, byte for byte, a from-scratch calculation's; an agent kept up to date with diffs from
 * what it was last sent holds that state, and so does a resyncing agent (a diff from nothing);
 * every node listing a set lists one instance of it, so its delta is computed once, and the
 * shared sets kept are only ones some node lists.
 */
class SharedSetPublicationTest {
    private static final List<String> NODE_NAMES = List.of("node0", "node1", "node2");

    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, GenericKubernetesResource> adminPolicies = new TreeMap<>();
    /** Every change so far, to replay into a from-scratch calculator (last write wins, as in the cluster). */
    private final List<Consumer<PolicyCalculator>> history = new ArrayList<>();

    @Test
    void hubWithSharedSetChangesEqualsAFullRecalculationAfterEveryBatch() {
        for (long seed = 1; seed <= 60; seed++) {
            run(seed, 40);
        }
    }

    private void run(long seed, int steps) {
        pods.clear();
        adminPolicies.clear();
        history.clear();
        RandomAdminCluster c = new RandomAdminCluster(seed);
        Random r = new Random(seed * 13 + 5);
        c.namespaces.forEach(n -> record(calc -> calc.upsertNamespace(n)));
        c.pods.forEach(p -> {
            pods.put(key(p), p);
            record(calc -> calc.upsertPod(p));
        });
        c.policies.forEach(p -> record(calc -> calc.upsertPolicy(p)));
        c.nodes.forEach(n -> record(calc -> calc.upsertNode(n)));
        c.adminPolicies.forEach(p -> {
            adminPolicies.put(p.getKind() + "/" + p.getMetadata().getName(), p);
            record(calc -> calc.upsertAdminPolicy(p));
        });
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        history.forEach(h -> h.accept(calc));
        SnapshotHub hub = new SnapshotHub();
        SnapshotDiff differ = new SnapshotDiff(1 << 20);
        Map<String, IndexedSnapshot> sent = new HashMap<>();
        Map<String, AgentView> agents = new HashMap<>();
        for (String node : NODE_NAMES) {
            sent.put(node, IndexedSnapshot.empty(node));
            agents.put(node, new AgentView());
        }
        for (int step = 0; step <= steps; step++) {
            int from = history.size();
            if (step > 0) {
                change(c, r, step);
                history.subList(from, history.size()).forEach(h -> h.accept(calc));
            }
            if (step == 0 || step == steps || r.nextInt(3) == 0) { // changes pile up between batches
                String as = "seed " + seed + ", step " + step;
                publishBatch(calc, hub);
                IncrementalPolicyCalculator fresh = new IncrementalPolicyCalculator();
                history.forEach(h -> h.accept(fresh));
                Map<String, IpSet> sets = new HashMap<>();
                for (String node : NODE_NAMES) {
                    NodeSnapshot want = fresh.snapshot(node);
                    IndexedSnapshot current = hub.current(node);
                    assertThat(current.snapshot()).as("%s, %s", as, node).isEqualTo(want);
                    assertThat(current.snapshot().toByteString())
                            .as("%s, %s", as, node)
                            .isEqualTo(want.toByteString());
                    assertThat(current.version())
                            .as("%s, %s: versions grow", as, node)
                            .isGreaterThanOrEqualTo(sent.get(node).version());
                    for (IpSet s : current.snapshot().getIpSetsList()) {
                        IpSet first = sets.putIfAbsent(s.getId(), s);
                        assertThat(first == null || first == s)
                                .as("%s: set %s of %s is a copy of another node's", as, s.getId(), node)
                                .isTrue();
                    }
                    AgentView agent = agents.get(node);
                    differ.diff(sent.get(node), current).forEach(p -> agent.apply(p.message()));
                    sent.put(node, current);
                    assertThat(agent.toSnapshot(node))
                            .as("%s, %s: agent kept up to date", as, node)
                            .isEqualTo(AgentView.canonical(want));
                    AgentView resynced = new AgentView();
                    differ.diff(IndexedSnapshot.empty(node), current).forEach(p -> resynced.apply(p.message()));
                    assertThat(resynced.toSnapshot(node))
                            .as("%s, %s: resynced agent", as, node)
                            .isEqualTo(AgentView.canonical(want));
                }
                long listed = hub.all().stream()
                        .flatMap(x -> x.snapshot().getIpSetsList().stream())
                        .map(IpSet::getId)
                        .distinct()
                        .count();
                assertThat((long) hub.sharedSetEntries())
                        .as("%s: only sets some node lists are kept", as)
                        .isLessThanOrEqualTo(listed);
            }
        }
    }

    @Test
    void aSetChangeWakesTheSubscribersOfEveryNodeListingItAndOnlyThem() {
        SnapshotHub hub = new SnapshotHub();
        IpSet shared =
                IpSet.newBuilder().setId("s:shared").addMembers("10.0.0.1").build();
        IpSet other = IpSet.newBuilder().setId("s:other").addMembers("10.0.0.2").build();
        hub.publish(
                List.of(
                        NodeSnapshot.newBuilder().setNode("a").addIpSets(shared).build(),
                        NodeSnapshot.newBuilder()
                                .setNode("b")
                                .addIpSets(other)
                                .addIpSets(shared)
                                .build(),
                        NodeSnapshot.newBuilder().setNode("c").addIpSets(other).build()),
                List.of(),
                1);
        hub.markReady();
        Map<String, Integer> wakes = new TreeMap<>();
        for (String node : List.of("a", "b", "c")) {
            hub.subscribe(node, () -> wakes.merge(node, 1, Integer::sum));
        }
        long before = hub.current("b").version();
        IpSet changed = shared.toBuilder().addMembers("10.0.0.3").build();
        hub.publish(List.of(), List.of(changed), 7);

        assertThat(wakes).containsOnlyKeys("a", "b");
        assertThat(hub.current("b").snapshot().getIpSets(1)).isSameAs(changed);
        assertThat(hub.current("a").snapshot().getIpSets(0))
                .isSameAs(hub.current("b").snapshot().getIpSets(1));
        assertThat(hub.current("b").version()).isGreaterThan(before);
        assertThat(hub.earliestEventTime("b", before, hub.current("b").version()))
                .isEqualTo(7);
        assertThat(hub.current("c").snapshot().getIpSetsList()).containsExactly(other);
    }

    /** What the calculation loop does with one batch. */
    private static void publishBatch(PolicyCalculator calc, SnapshotHub hub) {
        PolicyCalculator.Changes changes = calc.drainChanges();
        List<NodeSnapshot> built = new ArrayList<>();
        changes.nodes().forEach(n -> built.add(calc.snapshot(n)));
        hub.publish(built, changes.sets(), 1);
    }

    private void record(Consumer<PolicyCalculator> change) {
        history.add(change);
    }

    /** One random change, mostly pod or Node labels (set members only), recorded in {@link #history}. */
    private void change(RandomAdminCluster c, Random r, int step) {
        RandomCluster base = c.base();
        int kind = r.nextInt(10);
        if (kind <= 4 && !pods.isEmpty()) {
            Pod old = pick(pods, r);
            Pod relabelled = new PodBuilder(old)
                    .editMetadata()
                    .withLabels(base.mutate(old, step).getMetadata().getLabels())
                    .endMetadata()
                    .build();
            pods.put(key(relabelled), relabelled);
            record(calc -> calc.upsertPod(relabelled));
        } else if (kind <= 6) {
            var n = c.node(r.nextInt(NODE_NAMES.size()));
            record(calc -> calc.upsertNode(n));
        } else if (kind == 7 && !pods.isEmpty()) {
            Pod old = pick(pods, r);
            if (r.nextBoolean()) {
                pods.remove(key(old));
                record(calc -> calc.deletePod(
                        old.getMetadata().getNamespace(), old.getMetadata().getName()));
            } else {
                Pod p = base.mutate(old, 100 + step);
                pods.put(key(p), p);
                record(calc -> calc.upsertPod(p));
            }
        } else if (kind == 8 && !adminPolicies.isEmpty()) {
            GenericKubernetesResource old = pick(adminPolicies, r);
            if (r.nextInt(3) == 0) {
                adminPolicies.remove(old.getKind() + "/" + old.getMetadata().getName());
                record(calc -> calc.deleteAdminPolicy(
                        AdminPolicyKind.byKindName(old.getKind()),
                        old.getMetadata().getName()));
            } else {
                GenericKubernetesResource g = c.mutate(old);
                adminPolicies.put(g.getKind() + "/" + g.getMetadata().getName(), g);
                record(calc -> calc.upsertAdminPolicy(g));
            }
        } else if (kind == 9 && r.nextBoolean()) {
            var n = base.mutate(c.namespaces.get(r.nextInt(c.namespaces.size())));
            record(calc -> calc.upsertNamespace(n));
        } else {
            var ns = c.namespaces.get(r.nextInt(c.namespaces.size()));
            Pod p = base.pod(ns.getMetadata().getName(), "q" + step, 200 + step);
            pods.put(key(p), p);
            record(calc -> calc.upsertPod(p));
        }
    }

    private static <T> T pick(Map<String, T> m, Random r) {
        return new ArrayList<>(m.values()).get(r.nextInt(m.size()));
    }

    private static String key(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }
}
