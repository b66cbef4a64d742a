// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.controlplane.calc.RandomChanges.key;
import static io.kubeverdict.controlplane.calc.RandomChanges.pick;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.controlplane.calc.SetVersion;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Set changes published once for every node ({@link SnapshotHub#publish(List, List, long)} with
 * the calculator's {@link PolicyCalculator#drainChanges}) give exactly what publishing every
 * changed node's snapshot gives. Random clusters with the admin tiers, random changes (mostly
 * ones that change only the members of sets several nodes use; also pods moved, added and
 * deleted, admin-tier and NetworkPolicies replaced, deleted and added, so that policies and
 * their sets come to nodes and leave them), published in batches of random
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
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    /** Every change so far, to replay into a from-scratch calculator (last write wins, as in the cluster). */
    private final List<Consumer<PolicyCalculator>> history = new ArrayList<>();

    /** Set transitions the diff took from the calculator's changes: one change, several composed. */
    private final AtomicInteger singleDeltas = new AtomicInteger();

    private final AtomicInteger composedDeltas = new AtomicInteger();

    @Test
    void hubWithSharedSetChangesEqualsAFullRecalculationAfterEveryBatch() {
        for (long seed = 1; seed <= 60; seed++) {
            run(seed, 40);
        }
        assertThat(singleDeltas).as("transitions from one kept change").hasPositiveValue();
        assertThat(composedDeltas).as("transitions from several kept changes").hasPositiveValue();
    }

    private void run(long seed, int steps) {
        pods.clear();
        adminPolicies.clear();
        policies.clear();
        history.clear();
        RandomAdminCluster c = new RandomAdminCluster(seed);
        Random r = new Random(seed * 13 + 5);
        c.namespaces.forEach(n -> record(calc -> calc.upsertNamespace(n)));
        c.pods.forEach(p -> {
            pods.put(key(p), p);
            record(calc -> calc.upsertPod(p));
        });
        c.policies.forEach(p -> {
            policies.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
            record(calc -> calc.upsertPolicy(p));
        });
        c.nodes.forEach(n -> record(calc -> calc.upsertNode(n)));
        c.adminPolicies.forEach(p -> {
            adminPolicies.put(p.getKind() + "/" + p.getMetadata().getName(), p);
            record(calc -> calc.upsertAdminPolicy(p));
        });
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        history.forEach(h -> h.accept(calc));
        SnapshotHub hub = new SnapshotHub();
        SetHistory kept = hub.setHistory();
        SnapshotDiff differ = new SnapshotDiff(1 << 20, (a, b) -> {
            List<SetChange> path = kept.path(a, b);
            if (path != null) {
                (path.size() > 1 ? composedDeltas : singleDeltas).incrementAndGet();
            }
            return path;
        });
        SnapshotDiff walking = new SnapshotDiff(1 << 20); // compares contents: what agents got before deltas were kept
        Map<String, IndexedSnapshot> sent = new HashMap<>();
        Map<String, AgentView> agents = new HashMap<>();
        // Agents that sync only now and then: several changes behind, they get the composed delta.
        Map<String, IndexedSnapshot> sentToLagging = new HashMap<>();
        Map<String, AgentView> lagging = new HashMap<>();
        for (String node : NODE_NAMES) {
            sent.put(node, IndexedSnapshot.empty(node));
            agents.put(node, new AgentView());
            sentToLagging.put(node, IndexedSnapshot.empty(node));
            lagging.put(node, new AgentView());
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
                    List<Payload> delta = differ.diff(sent.get(node), current);
                    assertSameWire(delta, walking.diff(sent.get(node), current), as + ", " + node);
                    delta.forEach(p -> agent.apply(p.message()));
                    sent.put(node, current);
                    assertThat(agent.toSnapshot(node))
                            .as("%s, %s: agent kept up to date", as, node)
                            .isEqualTo(AgentView.canonical(want));
                    if (step == steps || r.nextInt(4) == 0) {
                        List<Payload> behind = differ.diff(sentToLagging.get(node), current);
                        assertSameWire(
                                behind, walking.diff(sentToLagging.get(node), current), as + ", " + node + ", lagging");
                        AgentView lag = lagging.get(node);
                        behind.forEach(p -> lag.apply(p.message()));
                        sentToLagging.put(node, current);
                        assertThat(lag.toSnapshot(node))
                                .as("%s, %s: agent several changes behind", as, node)
                                .isEqualTo(AgentView.canonical(want));
                    }
                    AgentView resynced = new AgentView();
                    differ.diff(IndexedSnapshot.empty(node), current).forEach(p -> resynced.apply(p.message()));
                    assertThat(resynced.toSnapshot(node))
                            .as("%s, %s: resynced agent", as, node)
                            .isEqualTo(AgentView.canonical(want));
                }
                assertThat(hub.sharedSetEntries())
                        .as("%s: only live sets are kept", as)
                        .isLessThanOrEqualTo(calc.ipSetCount());
            }
        }
    }

    @Test
    void aSetChangeWakesTheSubscribersOfEveryNodeListingItAndOnlyThem() {
        SnapshotHub hub = new SnapshotHub();
        SetVersion shared = SetVersion.of("s:shared", IpSetType.IP, List.of("10.0.0.1"));
        IpSet other =
                SetVersion.of("s:other", IpSetType.IP, List.of("10.0.0.2")).proto();
        hub.publish(
                List.of(
                        NodeSnapshot.newBuilder()
                                .setNode("a")
                                .addIpSets(shared.proto())
                                .build(),
                        NodeSnapshot.newBuilder()
                                .setNode("b")
                                .addIpSets(other)
                                .addIpSets(shared.proto())
                                .build(),
                        NodeSnapshot.newBuilder().setNode("c").addIpSets(other).build()),
                List.of(),
                List.of(),
                1);
        hub.markReady();
        Map<String, Integer> wakes = new TreeMap<>();
        for (String node : List.of("a", "b", "c")) {
            hub.subscribe(node, () -> wakes.merge(node, 1, Integer::sum));
        }
        long before = hub.current("b").version();
        SetVersion changed = SetVersion.of("s:shared", IpSetType.IP, List.of("10.0.0.1", "10.0.0.3"));
        hub.publish(List.of(), List.of(new SetChange(shared, changed, List.of("10.0.0.3"), List.of())), List.of(), 7);

        assertThat(wakes).containsOnlyKeys("a", "b");
        assertThat(hub.current("b").snapshot().getIpSets(1)).isSameAs(changed.proto());
        assertThat(hub.current("a").snapshot().getIpSets(0))
                .isSameAs(hub.current("b").snapshot().getIpSets(1));
        assertThat(hub.current("b").version()).isGreaterThan(before);
        assertThat(hub.earliestEventTime("b", before, hub.current("b").version()))
                .isEqualTo(7);
        assertThat(hub.current("c").snapshot().getIpSetsList()).containsExactly(other);
    }

    /**
     * An agent three set changes behind gets their composed delta (a member removed and added
     * back, or added and removed, is in neither list), the same bytes a walk of the two contents
     * gives, and ends with the current content; the delta is computed once for every agent.
     */
    @Test
    void anAgentSeveralChangesBehindGetsTheComposedDelta() {
        SnapshotHub hub = new SnapshotHub();
        List<String> members = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            members.add("10.0.0." + i);
        }
        SetVersion v0 = SetVersion.of("s:big", IpSetType.IP, members);
        hub.publish(
                List.of(NodeSnapshot.newBuilder()
                        .setNode("a")
                        .addIpSets(v0.proto())
                        .build()),
                List.of(),
                List.of(),
                1);
        hub.markReady();
        IndexedSnapshot sent = hub.current("a");
        // The contents in between are never built as protos: the history goes by version.
        SetVersion v1 = next(hub, v0, members, List.of("10.0.1.1"), List.of("10.0.0.2"));
        SetVersion v2 = next(hub, v1, members, List.of("10.0.1.2"), List.of("10.0.1.1"));
        SetVersion v3 = next(hub, v2, members, List.of("10.0.0.2"), List.of("10.0.0.3"));
        IndexedSnapshot current = hub.current("a");
        assertThat(current.snapshot().getIpSets(0)).isSameAs(v3.proto());

        List<List<SetChange>> paths = new ArrayList<>();
        SetHistory history = hub.setHistory();
        SnapshotDiff differ = new SnapshotDiff(1 << 20, (a, b) -> {
            List<SetChange> p = history.path(a, b);
            paths.add(p);
            return p;
        });
        List<Payload> delta = differ.diff(sent, current);
        assertThat(differ.diff(sent, current)).as("computed once").isEqualTo(delta);

        assertThat(paths).hasSize(1);
        assertThat(paths.get(0)).extracting(SetChange::to).containsExactly(v1, v2, v3);
        assertThat(delta)
                .extracting(p -> p.message().getIpSetDeltaUpdate())
                .satisfiesExactly(
                        d -> assertThat(d.getRemovedMembersList()).containsExactly("10.0.0.3"),
                        d -> assertThat(d.getAddedMembersList()).containsExactly("10.0.1.2"));
        assertSameWire(delta, new SnapshotDiff(1 << 20).diff(sent, current), "three changes behind");
        AgentView agent = new AgentView();
        new SnapshotDiff(1 << 20).diff(IndexedSnapshot.empty("a"), sent).forEach(p -> agent.apply(p.message()));
        delta.forEach(p -> agent.apply(p.message()));
        assertThat(agent.toSnapshot("a")).isEqualTo(AgentView.canonical(current.snapshot()));
    }

    /** Publishes one change of a set from {@code from} (whose members are {@code members}, updated); returns the new content. */
    private static SetVersion next(
            SnapshotHub hub, SetVersion from, List<String> members, List<String> added, List<String> removed) {
        members.removeAll(removed);
        members.addAll(added);
        SetVersion to = SetVersion.of(from.id(), from.type(), members);
        hub.publish(List.of(), List.of(new SetChange(from, to, added, removed)), List.of(), 1);
        return to;
    }

    /** What the calculation loop does with one batch. */
    private static void publishBatch(PolicyCalculator calc, SnapshotHub hub) {
        PolicyCalculator.Changes changes = calc.drainChanges();
        List<NodeSnapshot> built = new ArrayList<>();
        changes.nodes().forEach(n -> built.add(calc.publishableSnapshot(n)));
        hub.publish(built, changes.sets(), changes.droppedSets(), 1);
    }

    /** The same messages, byte for byte, in the same order. */
    private static void assertSameWire(List<Payload> got, List<Payload> want, String as) {
        assertThat(got.stream().map(p -> p.message().toByteString()).toList())
                .as("%s: the wire output of a diff", as)
                .isEqualTo(want.stream().map(p -> p.message().toByteString()).toList());
    }

    private void record(Consumer<PolicyCalculator> change) {
        history.add(change);
    }

    /** One random change, mostly pod or Node labels (set members only), recorded in {@link #history}. */
    private void change(RandomAdminCluster c, Random r, int step) {
        RandomCluster base = c.base();
        int kind = r.nextInt(11);
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
        } else if (kind == 10 && !policies.isEmpty()) {
            // A NetworkPolicy replaced, deleted or added: policies (and their sets) come to nodes and leave them.
            NetworkPolicy old = pick(policies, r);
            String ns = old.getMetadata().getNamespace();
            String name =
                    r.nextInt(4) == 0 ? "np-new" + step : old.getMetadata().getName();
            if (r.nextInt(4) == 0) {
                policies.remove(ns + "/" + name);
                record(calc -> calc.deletePolicy(ns, name));
            } else {
                NetworkPolicy p = base.policy(ns, name);
                policies.put(ns + "/" + name, p);
                record(calc -> calc.upsertPolicy(p));
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
}
