// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.controlplane.calc.AdminPolicy.Action;
import io.kubeverdict.controlplane.calc.AdminPolicy.DomainNames;
import io.kubeverdict.controlplane.calc.AdminPolicy.NamedPort;
import io.kubeverdict.controlplane.calc.AdminPolicy.Networks;
import io.kubeverdict.controlplane.calc.AdminPolicy.Nodes;
import io.kubeverdict.controlplane.calc.AdminPolicy.Peer;
import io.kubeverdict.controlplane.calc.AdminPolicy.Pods;
import io.kubeverdict.controlplane.calc.AdminPolicy.Port;
import io.kubeverdict.controlplane.calc.AdminPolicy.PortRange;
import io.kubeverdict.controlplane.calc.AdminPolicy.Rule;
import io.kubeverdict.controlplane.calc.AdminPolicy.Subject;
import io.kubeverdict.controlplane.calc.AdminPolicy.Tier;
import io.kubeverdict.policy.Cidr;
import io.kubeverdict.policy.DomainPattern;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

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
 * Pure: no I/O. Unknown fields are ignored, as the API server prunes them.
 */
public final class AdminPolicyReader {
    private static final KubernetesSerialization SERIALIZATION = ModelSerialization.INSTANCE;
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
            throw new IllegalArgumentException("not an admin-tier policy: " + resource.getApiVersion() + " " + resource.getKind());
        }
        if (resource.getMetadata() == null || resource.getMetadata().getName() == null
                || resource.getMetadata().getName().isEmpty()) {
            throw new IllegalArgumentException(kind.kind() + " without metadata.name");
        }
        return read(kind, resource.getMetadata().getName(), resource.getAdditionalProperties().get("spec"));
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
                problem("spec", (specObject == null ? "missing" : "not an object")
                        + "; the policy applies to every pod and has no rules");
                failObject = true;
                spec = Map.of();
            }
            Tier tier = tier(spec);
            int priority = priority(spec);
            if (kind == AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY && !"default".equals(name)) {
                problem("metadata.name", "a BaselineAdminNetworkPolicy must be named \"default\" (there is only one);"
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
            problem("spec.tier", (t == null ? "missing" : "unknown tier \"" + t + "\"")
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
                problem("spec.priority", (p == null ? "missing" : "not an integer: " + p)
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
                    throw new Unusable(field, set.isEmpty() ? "sets neither namespaces nor pods"
                            : "sets both namespaces and pods");
                }
                if (set.get(0).equals("namespaces")) {
                    return new Subject(selector(field + ".namespaces", s.get("namespaces")), Selector.ALL);
                }
                Pods pods = namespacedPod(field + ".pods", s.get("pods"));
                return new Subject(pods.namespaces(), pods.pods());
            } catch (Unusable e) {
                problem(e.field, e.getMessage() + "; the policy applies to every pod, its Allow rules match nothing,"
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
                List<Peer> peers = peers(field + (ingress ? ".from" : ".to"), r.get(ingress ? "from" : "to"), ingress, action);
                List<Port> ports = kind == AdminPolicyKind.CLUSTER_NETWORK_POLICY
                        ? protocols(field + ".protocols", r.get("protocols"))
                        : ports(field + ".ports", r.get("ports"));
                if (ports != null && ports.stream().anyMatch(p -> p instanceof NamedPort)
                        && hasNonPodPeer(r.get(ingress ? "from" : "to"))) {
                    throw new Unusable(field, "a named port cannot be used with nodes, networks or domainNames peers");
                }
                return new Rule(id, action, peers, ports, false);
            } catch (Unusable e) {
                problem(e.field, e.getMessage() + (action == Action.ALLOW
                        ? "; the rule matches no traffic" : "; the rule denies all traffic"));
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
            problem(field + ".action", (value == null ? "missing" : "unknown action \"" + value + "\"")
                    + "; the rule denies what it matches");
            return null;
        }

        List<Peer> peers(String field, Object value, boolean ingress, Action action) throws Unusable {
            if (!(value instanceof List<?> list) || list.isEmpty()) {
                throw new Unusable(field, value == null ? "missing" : value instanceof List<?> ? "empty" : "not a list");
            }
            Set<String> known = ingress ? Set.of("namespaces", "pods") : Set.of("namespaces", "pods", "nodes", "networks", "domainNames");
            List<Peer> out = new ArrayList<>();
            for (int j = 0; j < list.size(); j++) {
                String f = field + "[" + j + "]";
                if (!(list.get(j) instanceof Map<?, ?> p)) {
                    throw new Unusable(f, "not an object");
                }
                List<String> set = setFields(p, known);
                if (set.size() != 1) {
                    throw new Unusable(f, set.isEmpty() ? "sets none of " + String.join(", ", sorted(known))
                            : "sets more than one of " + String.join(", ", set));
                }
                String which = set.get(0);
                Object v = p.get(which);
                switch (which) {
                    case "namespaces" -> out.add(new Pods(selector(f + ".namespaces", v), Selector.ALL));
                    case "pods" -> out.add(namespacedPod(f + ".pods", v));
                    case "nodes" -> out.add(new Nodes(selector(f + ".nodes", v)));
                    case "networks" -> out.add(networks(f + ".networks", v));
                    default -> {
                        if (action != Action.ALLOW) {
                            throw new Unusable(f + ".domainNames", "domainNames are allowed in Allow/Accept rules only");
                        }
                        out.add(domainNames(f + ".domainNames", v));
                    }
                }
            }
            return out;
        }

        /** Whether a peer list names nodes, networks or domainNames (which have no named ports). */
        static boolean hasNonPodPeer(Object peers) {
            return peers instanceof List<?> list && list.stream().anyMatch(p -> p instanceof Map<?, ?> m
                    && (m.get("nodes") != null || m.get("networks") != null || m.get("domainNames") != null));
        }

        /** A non-empty list of valid patterns, canonical (lower case, no trailing dot), sorted and distinct. */
        static DomainNames domainNames(String field, Object value) throws Unusable {
            if (!(value instanceof List<?> list) || list.isEmpty()) {
                throw new Unusable(field, "must be a non-empty list of domain names");
            }
            TreeSet<String> patterns = new TreeSet<>();
            for (int k = 0; k < list.size(); k++) {
                String c = list.get(k) instanceof String s ? DomainPattern.canonical(s) : null;
                if (c == null) {
                    throw new Unusable(field + "[" + k + "]", "invalid domain name \"" + list.get(k)
                            + "\" (a name of two or more labels, optionally prefixed with *.)");
                }
                patterns.add(c);
            }
            return new DomainNames(List.copyOf(patterns));
        }

        Networks networks(String field, Object value) throws Unusable {
            if (!(value instanceof List<?> list) || list.isEmpty()) {
                throw new Unusable(field, "must be a non-empty list of CIDRs");
            }
            List<Cidr> cidrs = new ArrayList<>();
            for (int k = 0; k < list.size(); k++) {
                Cidr c = list.get(k) instanceof String s ? Cidr.tryParse(s) : null;
                if (c == null) {
                    throw new Unusable(field + "[" + k + "]", "invalid CIDR \"" + list.get(k) + "\"");
                }
                cidrs.add(c);
            }
            return new Networks(List.copyOf(cidrs));
        }

        /** v1alpha1 ports: portNumber {protocol, port} | namedPort | portRange {protocol, start, end}. */
        List<Port> ports(String field, Object value) throws Unusable {
            if (value == null) {
                return null;
            }
            List<?> list = nonEmptyList(field, value);
            List<Port> out = new ArrayList<>();
            for (int j = 0; j < list.size(); j++) {
                String f = field + "[" + j + "]";
                Map<?, ?> p = object(f, list.get(j));
                List<String> set = setFields(p, Set.of("portNumber", "namedPort", "portRange"));
                if (set.size() != 1) {
                    throw new Unusable(f, set.isEmpty() ? "sets none of portNumber, namedPort, portRange"
                            : "sets more than one of " + String.join(", ", set));
                }
                switch (set.get(0)) {
                    case "portNumber" -> {
                        Map<?, ?> n = object(f + ".portNumber", p.get("portNumber"));
                        int port = port(f + ".portNumber.port", n.get("port"));
                        out.add(new PortRange(protocol(f + ".portNumber.protocol", n.get("protocol")), port, port));
                    }
                    case "portRange" -> {
                        Map<?, ?> n = object(f + ".portRange", p.get("portRange"));
                        out.add(range(f + ".portRange", protocol(f + ".portRange.protocol", n.get("protocol")),
                                n.get("start"), n.get("end")));
                    }
                    default -> out.add(namedPort(f + ".namedPort", p.get("namedPort")));
                }
            }
            return out;
        }

        /** v1alpha2 protocols: tcp|udp|sctp {destinationPort: {number} | {range: {start, end}}} | destinationNamedPort. */
        List<Port> protocols(String field, Object value) throws Unusable {
            if (value == null) {
                return null;
            }
            List<?> list = nonEmptyList(field, value);
            List<Port> out = new ArrayList<>();
            for (int j = 0; j < list.size(); j++) {
                String f = field + "[" + j + "]";
                Map<?, ?> p = object(f, list.get(j));
                List<String> set = setFields(p, Set.of("tcp", "udp", "sctp", "destinationNamedPort"));
                if (set.size() != 1) {
                    throw new Unusable(f, set.isEmpty() ? "sets none of tcp, udp, sctp, destinationNamedPort"
                            : "sets more than one of " + String.join(", ", set));
                }
                String which = set.get(0);
                if (which.equals("destinationNamedPort")) {
                    out.add(namedPort(f + ".destinationNamedPort", p.get(which)));
                    continue;
                }
                Protocol protocol = switch (which) {
                    case "tcp" -> Protocol.TCP;
                    case "udp" -> Protocol.UDP;
                    default -> Protocol.SCTP;
                };
                Map<?, ?> proto = object(f + "." + which, p.get(which));
                String pf = f + "." + which + ".destinationPort";
                Map<?, ?> dp = object(pf, proto.get("destinationPort"));
                List<String> form = setFields(dp, Set.of("number", "range"));
                if (form.size() != 1) {
                    throw new Unusable(pf, form.isEmpty() ? "sets neither number nor range" : "sets both number and range");
                }
                if (form.get(0).equals("number")) {
                    int port = port(pf + ".number", dp.get("number"));
                    out.add(new PortRange(protocol, port, port));
                } else {
                    Map<?, ?> r = object(pf + ".range", dp.get("range"));
                    out.add(range(pf + ".range", protocol, r.get("start"), r.get("end")));
                }
            }
            return out;
        }

        PortRange range(String field, Protocol protocol, Object start, Object end) throws Unusable {
            int lo = port(field + ".start", start);
            int hi = port(field + ".end", end);
            if (lo >= hi) {
                throw new Unusable(field, "start " + lo + " must be less than end " + hi);
            }
            return new PortRange(protocol, lo, hi);
        }

        NamedPort namedPort(String field, Object value) throws Unusable {
            if (!(value instanceof String s) || !PortNames.valid(s)) {
                throw new Unusable(field, "invalid port name \"" + value + "\"");
            }
            return new NamedPort(s);
        }

        static int port(String field, Object value) throws Unusable {
            if ((value instanceof Integer || value instanceof Long) && ((Number) value).longValue() >= 1
                    && ((Number) value).longValue() <= 65535) {
                return ((Number) value).intValue();
            }
            throw new Unusable(field, value == null ? "missing" : "port " + value + " is not in 1-65535");
        }

        static Protocol protocol(String field, Object value) throws Unusable {
            Protocol p = value == null || value instanceof String ? Protocols.parse((String) value) : null;
            if (p == null) {
                throw new Unusable(field, "unsupported protocol \"" + value + "\" (TCP, UDP or SCTP)");
            }
            return p;
        }

        /** {namespaceSelector (optional: every namespace), podSelector (required)}. */
        Pods namespacedPod(String field, Object value) throws Unusable {
            Map<?, ?> m = object(field, value);
            if (!m.containsKey("podSelector")) {
                throw new Unusable(field + ".podSelector", "missing");
            }
            Selector namespaces = m.get("namespaceSelector") == null ? Selector.ALL
                    : selector(field + ".namespaceSelector", m.get("namespaceSelector"));
            return new Pods(namespaces, selector(field + ".podSelector", m.get("podSelector")));
        }

        static Selector selector(String field, Object value) throws Unusable {
            if (!(value instanceof Map<?, ?>)) {
                throw new Unusable(field, value == null ? "missing label selector" : "not a label selector");
            }
            LabelSelector ls;
            try {
                ls = SERIALIZATION.convertValue(value, LabelSelector.class);
            } catch (RuntimeException e) {
                throw new Unusable(field, "unreadable label selector");
            }
            try {
                return Selector.of(ls);
            } catch (Selector.InvalidSelectorException e) {
                throw new Unusable(field, e.getMessage());
            }
        }

        static Map<?, ?> object(String field, Object value) throws Unusable {
            if (value instanceof Map<?, ?> m) {
                return m;
            }
            throw new Unusable(field, value == null ? "missing" : "not an object");
        }

        static List<?> nonEmptyList(String field, Object value) throws Unusable {
            if (value instanceof List<?> l && !l.isEmpty()) {
                return l;
            }
            throw new Unusable(field, value instanceof List<?> ? "empty (leave it out to match every port)" : "not a list");
        }

        /** Which of the known fields are present with a non-null value, in sorted order. */
        static List<String> setFields(Map<?, ?> m, Set<String> known) {
            return sorted(known).stream().filter(k -> m.get(k) != null).toList();
        }

        static List<String> sorted(Set<String> s) {
            return s.stream().sorted().toList();
        }
    }

    /** Why a part of a rule or subject cannot be used, and where. */
    private static final class Unusable extends Exception {
        final String field;

        Unusable(String field, String message) {
            super(message);
            this.field = field;
        }
    }
}
