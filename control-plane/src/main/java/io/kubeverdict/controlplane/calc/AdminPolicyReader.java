// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.calc.AdminPeersReader.hasNonPodPeer;
import static io.kubeverdict.controlplane.calc.AdminPeersReader.namespacedPod;
import static io.kubeverdict.controlplane.calc.AdminPeersReader.peers;
import static io.kubeverdict.controlplane.calc.AdminPortsReader.ports;
import static io.kubeverdict.controlplane.calc.AdminPortsReader.protocols;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.object;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.selector;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.setFields;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.kubeverdict.controlplane.calc.AdminPolicy.Action;
import io.kubeverdict.controlplane.calc.AdminPolicy.NamedPort;
import io.kubeverdict.controlplane.calc.AdminPolicy.Peer;
import io.kubeverdict.controlplane.calc.AdminPolicy.Pods;
import io.kubeverdict.controlplane.calc.AdminPolicy.Port;
import io.kubeverdict.controlplane.calc.AdminPolicy.Rule;
import io.kubeverdict.controlplane.calc.AdminPolicy.Subject;
import io.kubeverdict.controlplane.calc.AdminPolicy.Tier;
import io.kubeverdict.controlplane.calc.AdminSpecFields.Unusable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the spec of an AdminNetworkPolicy, BaselineAdminNetworkPolicy (v1alpha1) or
 * ClusterNetworkPolicy (v1alpha2) into an {@link AdminPolicy}, field by field, so that whatever
 * the API server's validation would reject is reported where it is and fails closed as upstream
 * documents, without losing the rest of the object:
 * <ul>
 *   <li>a rule with an unusable part (a peer or port clause with zero or two fields, an
 *       unparsable CIDR or selector, no peers, a named port with a nodes/networks peer, ...)
 *       matches no traffic if it is an Allow/Accept and becomes "Deny all" if it is a Deny or a
 *       Pass; an unknown action denies what the rule matches;</li>
 *   <li>a priority outside 0-1000 is clamped into it (the order it asks for is kept);</li>
 *   <li>an object that cannot be used as a whole (an unusable subject, a missing priority or
 *       tier, a BaselineAdminNetworkPolicy not named {@code default}) is made to only ever
 *       narrow: an unusable subject means every pod, its Allow rules match nothing, its Pass
 *       rules deny what they match, its Deny rules stay; a rule list that is not a list is one
 *       "Deny all" rule;</li>
 *   <li>{@code domainNames} peers (exact names and {@code *.} wildcards, canonicalised) are
 *       allowed in Allow/Accept egress rules only, as upstream says; elsewhere, or with a name
 *       that is no valid pattern, the rule fails closed.</li>
 * </ul>
 * This class reads the object and its rules; the peers ({@link AdminPeersReader}) and ports
 * ({@link AdminPortsReader}, by API version) have their own readers, sharing
 * {@link AdminSpecFields}. Pure: no I/O. Unknown fields are ignored, as the API server prunes them.
 */
public final class AdminPolicyReader {
    private static final int MAX_PRIORITY = 1000;

    private AdminPolicyReader() {}

    /**
     * Reads a generic object of one of the {@link AdminPolicyKind}s.
     *
     * @throws IllegalArgumentException when the object is of no such kind or has no name
     */
    public static AdminPolicy read(GenericKubernetesResource resource) {
        AdminPolicyKind kind = AdminPolicyKind.of(resource.getApiVersion(), resource.getKind());
        if (kind == null) {
            throw new IllegalArgumentException(
                    "not an admin-tier policy: " + resource.getApiVersion() + " " + resource.getKind());
        }
        if (resource.getMetadata() == null
                || resource.getMetadata().getName() == null
                || resource.getMetadata().getName().isEmpty()) {
            throw new IllegalArgumentException(kind.kind() + " without metadata.name");
        }
        return read(
                kind,
                resource.getMetadata().getName(),
                resource.getAdditionalProperties().get("spec"));
    }

    public static AdminPolicy read(AdminPolicyKind kind, String name, Object spec) {
        return new Run(kind, name).read(spec);
    }

    private static final class Run {
        final AdminPolicyKind kind;
        final String name;
        final List<PolicyProblem> problems = new ArrayList<>();
        /** The object cannot be used as written: its rules are {@link #narrowed}. */
        boolean failObject;

        Run(AdminPolicyKind kind, String name) {
            this.kind = kind;
            this.name = name;
        }

        void problem(String field, String message) {
            problems.add(PolicyProblem.of(kind, name, field, message));
        }

        AdminPolicy read(Object specObject) {
            Map<?, ?> spec = specObject instanceof Map<?, ?> m ? m : null;
            if (spec == null) {
                problem(
                        "spec",
                        (specObject == null ? "missing" : "not an object")
                                + "; the policy applies to every pod and has no rules");
                failObject = true;
                spec = Map.of();
            }
            Tier tier = tier(spec);
            int priority = priority(spec);
            if (kind == AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY && !"default".equals(name)) {
                problem(
                        "metadata.name",
                        "a BaselineAdminNetworkPolicy must be named \"default\" (there is only one);"
                                + " its Allow rules match nothing");
                failObject = true;
            }
            Subject subject = subject(spec.get("subject"));
            List<Rule> ingress = rules(spec, "ingress", true);
            List<Rule> egress = rules(spec, "egress", false);
            if (failObject) {
                ingress = ingress.stream().map(Run::narrowed).toList();
                egress = egress.stream().map(Run::narrowed).toList();
            }
            return new AdminPolicy(kind, name, tier, priority, subject, ingress, egress, List.copyOf(problems));
        }

        /**
         * A rule of an object that cannot be used as written, made to only ever narrow: an Allow
         * matches nothing, a Pass denies what it matches (passing could skip a later deny), a
         * Deny stays.
         */
        static Rule narrowed(Rule r) {
            if (r.failedClosed() || r.action() == Action.DENY) {
                return r;
            }
            return r.action() == Action.ALLOW
                    ? new Rule(r.id(), Action.ALLOW, List.of(), List.of(), true)
                    : new Rule(r.id(), Action.DENY, r.peers(), r.ports(), true);
        }

        Tier tier(Map<?, ?> spec) {
            switch (kind) {
                case ADMIN_NETWORK_POLICY:
                    return Tier.ADMIN;
                case BASELINE_ADMIN_NETWORK_POLICY:
                    return Tier.BASELINE;
                default:
                    break;
            }
            Object t = spec.get("tier");
            if ("Admin".equals(t)) {
                return Tier.ADMIN;
            }
            if ("Baseline".equals(t)) {
                return Tier.BASELINE;
            }
            problem(
                    "spec.tier",
                    (t == null ? "missing" : "unknown tier \"" + t + "\"")
                            + " (Admin or Baseline); placed in the admin tier, its Allow rules match nothing, its Pass rules deny");
            failObject = true;
            return Tier.ADMIN;
        }

        int priority(Map<?, ?> spec) {
            if (kind == AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY) {
                return AdminPolicy.BASELINE_PRIORITY;
            }
            Object p = spec.get("priority");
            if (!(p instanceof Integer) && !(p instanceof Long)) {
                problem(
                        "spec.priority",
                        (p == null ? "missing" : "not an integer: " + p)
                                + "; evaluated first (priority 0), its Allow rules match nothing, its Pass rules deny");
                failObject = true;
                return 0;
            }
            long v = ((Number) p).longValue();
            if (v < 0 || v > MAX_PRIORITY) {
                int clamped = v < 0 ? 0 : MAX_PRIORITY;
                problem("spec.priority", "priority " + v + " outside 0-" + MAX_PRIORITY + "; evaluated at " + clamped);
                return clamped;
            }
            return (int) v;
        }

        Subject subject(Object value) {
            String field = "spec.subject";
            try {
                Map<?, ?> s = object(field, value);
                List<String> set = setFields(s, Set.of("namespaces", "pods"));
                if (set.size() != 1) {
                    throw new Unusable(
                            field,
                            set.isEmpty() ? "sets neither namespaces nor pods" : "sets both namespaces and pods");
                }
                if (set.get(0).equals("namespaces")) {
                    return new Subject(selector(field + ".namespaces", s.get("namespaces")), Selector.ALL);
                }
                Pods pods = namespacedPod(field + ".pods", s.get("pods"));
                return new Subject(pods.namespaces(), pods.pods());
            } catch (Unusable e) {
                problem(
                        e.field,
                        e.getMessage() + "; the policy applies to every pod, its Allow rules match nothing,"
                                + " its Pass rules deny");
                failObject = true;
                return Subject.EVERY_POD;
            }
        }

        List<Rule> rules(Map<?, ?> spec, String direction, boolean ingress) {
            Object value = spec.get(direction);
            if (value == null) {
                return List.of();
            }
            String field = "spec." + direction;
            if (!(value instanceof List<?> list)) {
                problem(field, "not a list; read as one rule that denies all " + direction);
                return List.of(Rule.failClosed(direction, Action.DENY));
            }
            List<Rule> out = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                out.add(rule(field + "[" + i + "]", direction + "[" + i + "]", list.get(i), ingress));
            }
            return out;
        }

        Rule rule(String field, String position, Object value, boolean ingress) {
            if (!(value instanceof Map<?, ?> r)) {
                problem(field, "not an object; the rule denies all traffic");
                return Rule.failClosed(position, Action.DENY);
            }
            String id = position;
            if (r.get("name") instanceof String n && !n.isEmpty()) {
                id = position + " (" + n + ")";
            }
            Action action = action(field, r.get("action"));
            boolean unknownAction = action == null;
            if (unknownAction) {
                action = Action.DENY;
            }
            try {
                List<Peer> peers =
                        peers(field + (ingress ? ".from" : ".to"), r.get(ingress ? "from" : "to"), ingress, action);
                List<Port> ports = kind == AdminPolicyKind.CLUSTER_NETWORK_POLICY
                        ? protocols(field + ".protocols", r.get("protocols"))
                        : ports(field + ".ports", r.get("ports"));
                if (ports != null
                        && ports.stream().anyMatch(p -> p instanceof NamedPort)
                        && hasNonPodPeer(r.get(ingress ? "from" : "to"))) {
                    throw new Unusable(field, "a named port cannot be used with nodes, networks or domainNames peers");
                }
                return new Rule(id, action, peers, ports, false);
            } catch (Unusable e) {
                problem(
                        e.field,
                        e.getMessage()
                                + (action == Action.ALLOW
                                        ? "; the rule matches no traffic"
                                        : "; the rule denies all traffic"));
                return Rule.failClosed(id, action);
            }
        }

        /** Allow/Accept (by version), Deny, Pass (not in a baseline admin policy); null when unknown. */
        Action action(String field, Object value) {
            String allow = kind == AdminPolicyKind.CLUSTER_NETWORK_POLICY ? "Accept" : "Allow";
            if (allow.equals(value)) {
                return Action.ALLOW;
            }
            if ("Deny".equals(value)) {
                return Action.DENY;
            }
            if ("Pass".equals(value) && kind != AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY) {
                return Action.PASS;
            }
            problem(
                    field + ".action",
                    (value == null ? "missing" : "unknown action \"" + value + "\"")
                            + "; the rule denies what it matches");
            return null;
        }
    }
}
