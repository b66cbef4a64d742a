// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Felix's habit: the same final cluster reached through events in any order, squashed (only
 * final objects) or split (intermediate versions, objects created then deleted), must give
 * byte-identical snapshots and the same problems — and {@link PolicyCalculator#drainChangedNodes()}
 * must name every node whose snapshot changed since the previous drain. Every kind takes part:
 * namespaces, pods, NetworkPolicies, Nodes and the admin-tier policies of both API versions.
 */
class OrderIndependenceTest {

    /** One event: an upsert of an object or a delete of kind/namespace/name. */
    record Event(HasMetadata upsert, String deleteKind, String ns, String name) {
        void apply(PolicyCalculator c) {
            if (upsert instanceof Namespace n) {
                c.upsertNamespace(n);
            } else if (upsert instanceof Pod p) {
                c.upsertPod(p);
            } else if (upsert instanceof NetworkPolicy np) {
                c.upsertPolicy(np);
            } else if (upsert instanceof Node n) {
                c.upsertNode(n);
            } else if (upsert instanceof GenericKubernetesResource g) {
                c.upsertAdminPolicy(g);
            } else if ("Namespace".equals(deleteKind)) {
                c.deleteNamespace(name);
            } else if ("Pod".equals(deleteKind)) {
                c.deletePod(ns, name);
            } else if ("Node".equals(deleteKind)) {
                c.deleteNode(name);
            } else if (AdminPolicyKind.byKindName(deleteKind) != null) {
                c.deleteAdminPolicy(AdminPolicyKind.byKindName(deleteKind), name);
            } else {
                c.deletePolicy(ns, name);
            }
        }
    }

    @Test
    void shuffledSquashedAndSplitEventStreamsGiveIdenticalSnapshots() {
        for (long seed = 1; seed <= 400; seed++) {
            RandomAdminCluster c = new RandomAdminCluster(seed);
            Random r = new Random(seed * 7919);
            c.nodes.replaceAll(n -> withPodCidrs(n, r));
            Map<String, Object> expected = canonical(c);

            // Squashed: only the final objects, shuffled.
            List<Event> squashed = finalEvents(c);
            Collections.shuffle(squashed, r);
            assertThat(run(squashed, r, false)).as("squashed, seed %d", seed).isEqualTo(expected);

            // Split: intermediate versions, extra objects created and deleted, finals last per object.
            List<Event> split = splitEvents(c, r);
            assertThat(run(split, r, true)).as("split, seed %d", seed).isEqualTo(expected);
        }
    }

    /**
     * The node with pod ranges that hold all, some or none of the random pods' addresses (10.1.x.y,
     * fd00::n), or none at all: addresses outside them are refused, whichever came first, the pod or
     * its Node, and again when the ranges change.
     */
    private static Node withPodCidrs(Node node, Random r) {
        List<String> ranges = switch (r.nextInt(4)) {
            case 0 -> List.of();
            case 1 -> List.of("10.1.0.0/16", "fd00::/112");
            case 2 -> List.of("10.1.0.0/25");
            default -> List.of("10.1.0.128/25", "fd00::/124");
        };
        return new io.fabric8.kubernetes.api.model.NodeBuilder(node)
                .editOrNewSpec()
                .withPodCIDRs(ranges)
                .endSpec()
                .build();
    }

    /** The snapshots, and the problems (which include order-dependent-looking overlap warnings). */
    private static Map<String, Object> canonical(RandomAdminCluster c) {
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        c.namespaces.forEach(calc::upsertNamespace);
        c.pods.forEach(calc::upsertPod);
        c.policies.forEach(calc::upsertPolicy);
        c.nodes.forEach(calc::upsertNode);
        c.adminPolicies.forEach(calc::upsertAdminPolicy);
        return result(calc);
    }

    private static Map<String, Object> result(IncrementalPolicyCalculator calc) {
        Map<String, Object> out = new HashMap<>();
        calc.nodes().forEach(n -> out.put(n, calc.snapshot(n)));
        out.put("problems", calc.problems());
        out.put("refused", calc.refusedAddresses());
        return out;
    }

    private static List<Event> finalEvents(RandomAdminCluster c) {
        List<Event> out = new ArrayList<>();
        c.namespaces.forEach(n -> out.add(new Event(n, null, null, null)));
        c.pods.forEach(p -> out.add(new Event(p, null, null, null)));
        c.policies.forEach(p -> out.add(new Event(p, null, null, null)));
        c.nodes.forEach(n -> out.add(new Event(n, null, null, null)));
        c.adminPolicies.forEach(p -> out.add(new Event(p, null, null, null)));
        return out;
    }

    /**
     * Each object gets 0-2 random earlier versions before its final one; some extra pods and
     * policies appear and are deleted; streams of different objects interleave randomly.
     */
    private static List<Event> splitEvents(RandomAdminCluster admin, Random r) {
        RandomCluster c = admin.base();
        List<List<Event>> perObject = new ArrayList<>();
        int idx = 1000;
        for (Namespace n : c.namespaces) {
            List<Event> s = new ArrayList<>();
            for (int i = r.nextInt(3); i > 0; i--) {
                s.add(new Event(c.mutate(n), null, null, null));
            }
            if (r.nextInt(4) == 0) {
                s.add(new Event(null, "Namespace", null, n.getMetadata().getName()));
            }
            s.add(new Event(n, null, null, null));
            perObject.add(s);
        }
        for (Pod p : admin.pods) {
            List<Event> s = new ArrayList<>();
            for (int i = r.nextInt(3); i > 0; i--) {
                s.add(new Event(c.mutate(p, idx++ % 40), null, null, null));
            }
            s.add(new Event(p, null, null, null));
            perObject.add(s);
        }
        for (Node n : admin.nodes) {
            List<Event> s = new ArrayList<>();
            for (int i = r.nextInt(3); i > 0; i--) {
                s.add(new Event(
                        withPodCidrs(
                                admin.node(Integer.parseInt(
                                        n.getMetadata().getName().substring(4))),
                                r),
                        null,
                        null,
                        null));
            }
            if (r.nextInt(4) == 0) {
                s.add(new Event(null, "Node", null, n.getMetadata().getName()));
            }
            s.add(new Event(n, null, null, null));
            perObject.add(s);
        }
        for (GenericKubernetesResource g : admin.adminPolicies) {
            List<Event> s = new ArrayList<>();
            for (int i = r.nextInt(3); i > 0; i--) {
                s.add(new Event(admin.mutate(g), null, null, null));
            }
            if (r.nextInt(4) == 0) {
                s.add(new Event(null, g.getKind(), null, g.getMetadata().getName()));
            }
            s.add(new Event(g, null, null, null));
            perObject.add(s);
        }
        for (int i = r.nextInt(2); i > 0; i--) {
            GenericKubernetesResource extra = admin.policy("v1alpha2", "ClusterNetworkPolicy", "extra-cnp" + i);
            perObject.add(List.of(
                    new Event(extra, null, null, null),
                    new Event(null, "ClusterNetworkPolicy", null, "extra-cnp" + i)));
        }
        for (NetworkPolicy np : c.policies) {
            List<Event> s = new ArrayList<>();
            for (int i = r.nextInt(3); i > 0; i--) {
                s.add(new Event(
                        c.policy(
                                np.getMetadata().getNamespace(),
                                np.getMetadata().getName()),
                        null,
                        null,
                        null));
            }
            s.add(new Event(np, null, null, null));
            perObject.add(s);
        }
        for (int i = r.nextInt(3); i > 0; i--) {
            String ns = c.namespaces
                    .get(r.nextInt(c.namespaces.size()))
                    .getMetadata()
                    .getName();
            Pod extra = c.pod(ns, "extra" + i, 100 + i);
            perObject.add(List.of(new Event(extra, null, null, null), new Event(null, "Pod", ns, "extra" + i)));
            NetworkPolicy np = c.policy(ns, "extra-np" + i);
            perObject.add(
                    List.of(new Event(np, null, null, null), new Event(null, "NetworkPolicy", ns, "extra-np" + i)));
        }
        // Interleave: repeatedly take the next event of a random object stream.
        List<Event> out = new ArrayList<>();
        List<Integer> pos = new ArrayList<>(Collections.nCopies(perObject.size(), 0));
        int remaining = perObject.stream().mapToInt(List::size).sum();
        while (remaining > 0) {
            int o = r.nextInt(perObject.size());
            if (pos.get(o) < perObject.get(o).size()) {
                out.add(perObject.get(o).get(pos.get(o)));
                pos.set(o, pos.get(o) + 1);
                remaining--;
            }
        }
        return out;
    }

    /**
     * Replays events; with checkDrains, drains at random points and checks that a node whose
     * snapshot differs from the one seen at its last drain was reported.
     */
    private static Map<String, Object> run(List<Event> events, Random r, boolean checkDrains) {
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        Map<String, NodeSnapshot> seen = new HashMap<>();
        Set<String> allNodes = new TreeSet<>();
        for (Event e : events) {
            e.apply(calc);
            allNodes.addAll(calc.nodes());
            if (checkDrains && r.nextInt(3) == 0) {
                Set<String> changed = calc.drainChangedNodes();
                for (String node : allNodes) {
                    NodeSnapshot now = calc.snapshot(node);
                    NodeSnapshot before = seen.getOrDefault(
                            node, NodeSnapshot.newBuilder().setNode(node).build());
                    if (!now.equals(before)) {
                        assertThat(changed)
                                .as("node %s changed but was not drained", node)
                                .contains(node);
                    }
                    seen.put(node, now);
                }
            }
        }
        return result(calc);
    }
}
