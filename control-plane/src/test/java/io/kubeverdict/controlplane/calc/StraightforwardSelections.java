// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which policies select which pod, by the definition and nothing else: every NetworkPolicy's pod
 * selector matched against every endpoint pod of its namespace, every admin-tier subject against
 * every endpoint pod and its namespace's labels (a namespace not declared has only its name
 * label), a staged policy under "staged:" + its key. Endpoints are pods as {@link PodModel} reads
 * them without the addresses the calculator gives nobody (contested or refused: taken from the
 * calculator, which this does not check). Also the admin-tier pairs of equal tier and priority,
 * both live or both staged, that select a common pod. The reference for {@link SelectionEquivalenceTest}.
 */
final class StraightforwardSelections {
    private final Map<String, TreeSet<String>> byPod = new TreeMap<>();
    private final List<String> overlapping = new ArrayList<>();

    StraightforwardSelections(
            Map<String, Namespace> namespaces,
            Map<String, Pod> pods,
            Map<String, NetworkPolicy> policies,
            Map<String, GenericKubernetesResource> adminPolicies,
            PolicyCalculator calc) {
        Set<String> unusable = new HashSet<>(calc.addressConflicts().keySet());
        Map<String, Set<String>> refused = new TreeMap<>();
        for (RefusedAddress a : calc.refusedAddresses()) {
            refused.computeIfAbsent(a.pod(), k -> new HashSet<>()).add(a.address());
        }
        List<CompiledPolicy> compiled = new ArrayList<>();
        List<String> compiledKeys = new ArrayList<>();
        for (NetworkPolicy np : policies.values()) {
            CompiledPolicy p = PolicyCompiler.compile(np);
            compiled.add(p);
            compiledKeys.add(key(Staging.isStaged(np.getMetadata()), p.key()));
        }
        Map<String, AdminPolicy> admin = new TreeMap<>();
        for (GenericKubernetesResource g : adminPolicies.values()) {
            AdminPolicy a = AdminPolicyReader.read(g);
            admin.put(key(Staging.isStaged(g.getMetadata()), a.key()), a);
        }
        for (Pod pod : pods.values()) {
            PodModel m = PodModel.of(pod);
            List<String> ips = new ArrayList<>(m.ips());
            ips.removeAll(unusable);
            ips.removeAll(refused.getOrDefault(m.key(), Set.of()));
            TreeSet<String> keys = new TreeSet<>();
            byPod.put(m.key(), keys);
            if (!m.endpoint() || ips.isEmpty()) {
                continue;
            }
            for (int i = 0; i < compiled.size(); i++) {
                CompiledPolicy p = compiled.get(i);
                if (p.namespace().equals(m.namespace()) && p.podSelector().matches(m.labels())) {
                    keys.add(compiledKeys.get(i));
                }
            }
            Namespace ns = namespaces.get(m.namespace());
            Map<String, String> nsLabels = Labels.namespace(
                    m.namespace(),
                    ns == null || ns.getMetadata().getLabels() == null
                            ? Map.of()
                            : ns.getMetadata().getLabels());
            List<String> selecting = new ArrayList<>();
            for (Map.Entry<String, AdminPolicy> e : admin.entrySet()) {
                AdminPolicy a = e.getValue();
                if (a.subject().namespaces().matches(nsLabels)
                        && a.subject().pods().matches(m.labels())) {
                    keys.add(e.getKey());
                    selecting.add(e.getKey());
                }
            }
            for (String ka : selecting) {
                for (String kb : selecting) {
                    AdminPolicy a = admin.get(ka);
                    AdminPolicy b = admin.get(kb);
                    boolean sameForm = ka.startsWith(Staging.PREFIX) == kb.startsWith(Staging.PREFIX);
                    if (!ka.equals(kb) && sameForm && a.tier() == b.tier() && a.priority() == b.priority()) {
                        overlapping.add(a.kind().kind() + " " + a.name() + " with "
                                + b.kind().kind() + " " + b.name());
                    }
                }
            }
        }
        // One warning per policy of each pair: the distinct (policy, other) combinations, named by policy.
        List<String> distinct = new ArrayList<>(new TreeSet<>(overlapping));
        overlapping.clear();
        for (String d : distinct) {
            overlapping.add(d.substring(0, d.indexOf(" with ")));
        }
        overlapping.sort(null);
    }

    private static String key(boolean staged, String key) {
        return staged ? Staging.PREFIX + key : key;
    }

    /** Per pod key (every pod, endpoint or not), the keys of the policies selecting it. */
    Map<String, TreeSet<String>> byPod() {
        return byPod;
    }

    /** "Kind name" of each policy once per other policy it overlaps with, sorted. */
    List<String> overlapping() {
        return overlapping;
    }
}
