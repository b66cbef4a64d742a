// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.calc.RandomChanges.adminKey;
import static io.kubeverdict.controlplane.calc.RandomChanges.key;
import static io.kubeverdict.controlplane.calc.RandomChanges.pick;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The index's selections (one {@link Selection} per distinct selector, interned per-pod
 * combinations of policy keys changed once per distinct combination) against the straightforward
 * definition: every policy's selector matched against every pod. Random clusters with both
 * admin-tier API versions (priorities from a small range, so ties happen), some policies staged,
 * built in a random order and then changed at random (pods relabelled, replaced, added and
 * deleted; namespaces relabelled and deleted; NetworkPolicies and admin-tier policies replaced,
 * added and deleted; Nodes), one to three events between reads. After every batch: the keys of the policies selecting each pod equal
 * those of the straightforward match; the equal-priority overlap warnings name exactly the pairs
 * that match finds; the interned combinations are exactly those pods hold (none leaked). At
 * random points and at the end, every node's snapshot equals, byte for byte, a fresh calculator's
 * fed the current objects in another random order.
 */
class SelectionEquivalenceTest {
    private static final List<String> NODE_NAMES = List.of("node0", "node1", "node2");

    private final Map<String, Namespace> namespaces = new TreeMap<>();
    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final Map<String, Node> nodes = new TreeMap<>();
    private final Map<String, GenericKubernetesResource> adminPolicies = new TreeMap<>();

    @Test
    void selectionsEqualTheStraightforwardMatchAfterEveryBatch() {
        for (long seed = 1; seed <= 150; seed++) {
            run(seed, 30);
        }
    }

    private void run(long seed, int steps) {
        namespaces.clear();
        pods.clear();
        policies.clear();
        nodes.clear();
        adminPolicies.clear();
        RandomAdminCluster c = new RandomAdminCluster(seed);
        Random r = new Random(seed * 131 + 5);
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        List<HasMetadata> objects = new ArrayList<>();
        objects.addAll(c.namespaces);
        objects.addAll(c.pods);
        objects.addAll(c.policies);
        objects.addAll(c.nodes);
        objects.addAll(c.adminPolicies);
        Collections.shuffle(objects, r);
        for (HasMetadata o : objects) {
            apply(calc, staged(o, r));
            // Read after some events only: what policy events leave pending settles in batches too.
            if (r.nextInt(3) == 0) {
                assertSelections(
                        calc, "seed " + seed + ", load " + o.getMetadata().getName());
            }
        }
        int event = 0;
        for (int step = 0; step < steps; step++) {
            List<String> batch = new ArrayList<>();
            for (int i = 1 + r.nextInt(3); i > 0; i--) {
                batch.add(change(c, r, calc, event++));
            }
            String as = "seed " + seed + ", step " + step + " " + batch;
            assertSelections(calc, as);
            if (r.nextInt(8) == 0) {
                assertSnapshotsAsFresh(calc, r, as);
            }
        }
        assertSnapshotsAsFresh(calc, r, "seed " + seed + ", end");
    }

    /** One random change, applied to {@code calc} and to the objects; returns what it was. */
    private String change(RandomAdminCluster c, Random r, IncrementalPolicyCalculator calc, int event) {
        RandomCluster base = c.base();
        int kind = r.nextInt(11);
        if (kind <= 2 && !pods.isEmpty()) {
            Pod old = pick(pods, r);
            apply(
                    calc,
                    new PodBuilder(old)
                            .editMetadata()
                            .withLabels(base.mutate(old, event).getMetadata().getLabels())
                            .endMetadata()
                            .build());
            return "pod labels " + key(old);
        }
        if (kind == 3 && !pods.isEmpty()) {
            Pod old = pick(pods, r);
            if (r.nextBoolean()) {
                pods.remove(key(old));
                calc.deletePod(
                        old.getMetadata().getNamespace(), old.getMetadata().getName());
                return "pod deleted " + key(old);
            }
            apply(calc, base.mutate(old, 100 + event));
            return "pod replaced " + key(old);
        }
        if (kind == 4 && !namespaces.isEmpty()) {
            String ns = pick(namespaces, r).getMetadata().getName();
            apply(calc, base.pod(ns, "q" + event, 200 + event));
            return "pod added in " + ns;
        }
        if (kind <= 6 && !namespaces.isEmpty()) {
            Namespace n = pick(namespaces, r);
            if (r.nextInt(4) == 0) {
                namespaces.remove(n.getMetadata().getName());
                calc.deleteNamespace(n.getMetadata().getName());
                return "namespace deleted " + n.getMetadata().getName();
            }
            apply(calc, base.mutate(n));
            return "namespace labels " + n.getMetadata().getName();
        }
        if (kind == 7 && !policies.isEmpty()) {
            NetworkPolicy old = pick(policies, r);
            String ns = old.getMetadata().getNamespace();
            String name = old.getMetadata().getName();
            if (r.nextInt(3) == 0) {
                policies.remove(ns + "/" + name);
                calc.deletePolicy(ns, name);
                return "policy deleted " + ns + "/" + name;
            }
            apply(calc, staged(base.policy(ns, name), r));
            return "policy replaced " + ns + "/" + name;
        }
        if (kind == 8 && !adminPolicies.isEmpty()) {
            GenericKubernetesResource old = pick(adminPolicies, r);
            if (r.nextInt(3) == 0) {
                adminPolicies.remove(adminKey(old));
                calc.deleteAdminPolicy(
                        AdminPolicyKind.byKindName(old.getKind()),
                        old.getMetadata().getName());
                return "admin policy deleted " + adminKey(old);
            }
            apply(calc, staged(c.mutate(old), r));
            return "admin policy replaced " + adminKey(old);
        }
        if (kind == 9) {
            apply(calc, staged(c.policy("v1alpha2", "ClusterNetworkPolicy", "cnp-new" + event), r));
            return "cluster network policy added";
        }
        if (kind == 10) {
            apply(calc, c.node(r.nextInt(NODE_NAMES.size())));
            return "node";
        }
        if (!namespaces.isEmpty()) {
            String ns = pick(namespaces, r).getMetadata().getName();
            apply(calc, staged(base.policy(ns, "np-new" + event), r));
            return "policy added in " + ns;
        }
        return "nothing";
    }

    /** A fifth of the policies staged (under "staged:" + their key, listed in no enforced tier). */
    private static HasMetadata staged(HasMetadata o, Random r) {
        if (r.nextInt(5) != 0) {
            return o;
        }
        Map<String, String> staged = Map.of(Staging.ANNOTATION, "true");
        if (o instanceof NetworkPolicy np) {
            return new NetworkPolicyBuilder(np)
                    .editMetadata()
                    .withAnnotations(staged)
                    .endMetadata()
                    .build();
        }
        if (o instanceof GenericKubernetesResource g) {
            return new GenericKubernetesResourceBuilder(g)
                    .editMetadata()
                    .withAnnotations(staged)
                    .endMetadata()
                    .build();
        }
        return o;
    }

    private void apply(IncrementalPolicyCalculator calc, HasMetadata o) {
        if (o instanceof Namespace n) {
            namespaces.put(n.getMetadata().getName(), n);
            calc.upsertNamespace(n);
        } else if (o instanceof Pod p) {
            pods.put(key(p), p);
            calc.upsertPod(p);
        } else if (o instanceof NetworkPolicy np) {
            policies.put(
                    np.getMetadata().getNamespace() + "/" + np.getMetadata().getName(), np);
            calc.upsertPolicy(np);
        } else if (o instanceof Node n) {
            nodes.put(n.getMetadata().getName(), n);
            calc.upsertNode(n);
        } else {
            GenericKubernetesResource g = (GenericKubernetesResource) o;
            adminPolicies.put(adminKey(g), g);
            calc.upsertAdminPolicy(g);
        }
    }

    /** The index's selections, overlap warnings and interned combinations against the straightforward match. */
    private void assertSelections(IncrementalPolicyCalculator calc, String as) {
        StraightforwardSelections want = new StraightforwardSelections(namespaces, pods, policies, adminPolicies, calc);
        Set<List<String>> combinations = new HashSet<>();
        int selected = 0;
        for (Map.Entry<String, TreeSet<String>> e : want.byPod().entrySet()) {
            List<String> expected = e.getValue().isEmpty() ? null : List.copyOf(e.getValue());
            assertThat(calc.policiesSelecting(e.getKey()))
                    .as("%s: policies selecting %s", as, e.getKey())
                    .isEqualTo(expected);
            if (expected != null) {
                combinations.add(expected);
                selected++;
            }
        }
        assertThat(calc.selectedPods())
                .as("%s: pods with a selection entry", as)
                .isEqualTo(selected);
        assertThat(calc.selectionCombinations())
                .as("%s: interned combinations", as)
                .isEqualTo(combinations.size());
        List<String> overlapping = new ArrayList<>();
        for (PolicyProblem p : calc.problems()) {
            if (p.message().contains("upstream leaves their order open")) {
                overlapping.add(p.kind() + " " + p.name());
            }
        }
        Collections.sort(overlapping);
        assertThat(overlapping).as("%s: equal-priority overlaps", as).isEqualTo(want.overlapping());
    }

    private void assertSnapshotsAsFresh(IncrementalPolicyCalculator calc, Random r, String as) {
        IncrementalPolicyCalculator fresh = new IncrementalPolicyCalculator();
        List<Runnable> events = new ArrayList<>();
        namespaces.values().forEach(n -> events.add(() -> fresh.upsertNamespace(n)));
        policies.values().forEach(p -> events.add(() -> fresh.upsertPolicy(p)));
        pods.values().forEach(p -> events.add(() -> fresh.upsertPod(p)));
        nodes.values().forEach(n -> events.add(() -> fresh.upsertNode(n)));
        adminPolicies.values().forEach(p -> events.add(() -> fresh.upsertAdminPolicy(p)));
        Collections.shuffle(events, r);
        events.forEach(Runnable::run);
        assertThat(calc.nodes()).as(as).isEqualTo(fresh.nodes());
        for (String node : NODE_NAMES) {
            assertThat(calc.snapshot(node)).as("%s, %s", as, node).isEqualTo(fresh.snapshot(node));
            assertThat(calc.snapshot(node).toByteString())
                    .as("%s, %s", as, node)
                    .isEqualTo(fresh.snapshot(node).toByteString());
        }
    }
}
