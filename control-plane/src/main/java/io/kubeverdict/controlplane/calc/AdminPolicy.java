// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.policy.Cidr;
import io.kubeverdict.proto.v1.Protocol;
import java.util.List;

/**
 * An AdminNetworkPolicy, BaselineAdminNetworkPolicy or ClusterNetworkPolicy as the calculation
 * reads it: one shape for both API versions, validated (see {@link AdminPolicyReader}). What the
 * API server's validation would have rejected is already turned into its fail-closed form here:
 * a rule with an unusable part is {@link Rule#failedClosed()}, an object that cannot be used as a
 * whole only narrows (see the reader).
 *
 * @param priority the precedence within the tier, lower first; BaselineAdminNetworkPolicy has
 *     none and sorts after every ClusterNetworkPolicy of the baseline tier ({@link #BASELINE_PRIORITY})
 * @param problems what could not be used as written, by field
 */
public record AdminPolicy(
        AdminPolicyKind kind,
        String name,
        Tier tier,
        int priority,
        Subject subject,
        List<Rule> ingress,
        List<Rule> egress,
        List<PolicyProblem> problems) {

    /** Where a BaselineAdminNetworkPolicy sorts among the baseline tier's ClusterNetworkPolicies. */
    public static final int BASELINE_PRIORITY = 1001;

    public enum Tier {
        ADMIN,
        BASELINE
    }

    /** What a rule does to a connection it matches. */
    public enum Action {
        ALLOW,
        DENY,
        PASS
    }

    /** The pods a policy applies to: endpoint pods matching {@code pods} in namespaces matching {@code namespaces}. */
    public record Subject(Selector namespaces, Selector pods) {
        public static final Subject EVERY_POD = new Subject(Selector.ALL, Selector.ALL);
    }

    /**
     * One ordered rule. Peers are OR'ed; ports are OR'ed and null means every port and protocol.
     *
     * @param id where the rule is, for explanations: "ingress[2]" or "ingress[2] (allow-dns)"
     * @param failedClosed the rule (or its object) had an unusable part and was narrowed
     *     (upstream: an Allow then matches no traffic, a Deny or Pass becomes "Deny all");
     *     {@code action}/{@code peers}/{@code ports} already say so
     */
    public record Rule(String id, Action action, List<Peer> peers, List<Port> ports, boolean failedClosed) {
        /** The upstream fail-closed form of a rule with an unusable part. */
        static Rule failClosed(String id, Action written) {
            return written == Action.ALLOW
                    ? new Rule(id, Action.ALLOW, List.of(), List.of(), true)
                    : new Rule(id, Action.DENY, List.of(new Everything()), null, true);
        }
    }

    /** A rule peer. */
    public sealed interface Peer permits Pods, Nodes, Networks, DomainNames, Everything {}

    /** Endpoint pods matching {@code pods} in namespaces matching {@code namespaces} (hostNetwork pods are never peers). */
    public record Pods(Selector namespaces, Selector pods) implements Peer {}

    /** The addresses (status.addresses) of the nodes whose labels match. Egress only. */
    public record Nodes(Selector nodes) implements Peer {}

    /** Every address in these blocks, pods included. Egress only. */
    public record Networks(List<Cidr> cidrs) implements Peer {}

    /**
     * The addresses the subject pod itself learns from DNS answers for names matching these
     * patterns (canonical, sorted, distinct; see {@link io.kubeverdict.policy.DomainPattern}).
     * Egress, Allow/Accept rules only.
     */
    public record DomainNames(List<String> patterns) implements Peer {}

    /** Every address: only in a rule that failed closed to "Deny all". */
    public record Everything() implements Peer {}

    /** A destination port clause. */
    public sealed interface Port permits PortRange, NamedPort {}

    /** Ports lo..hi of one protocol (lo == hi for a single port; 1..65535 for every port). */
    public record PortRange(Protocol protocol, int lo, int hi) implements Port {}

    /** A container port name of the destination pod, on whatever protocol the container port has. */
    public record NamedPort(String name) implements Port {}

    /** "anp:name", "banp:default", "cnp:name": unique among every policy kind (NetworkPolicy keys are "ns/name"). */
    public String key() {
        return key(kind, name);
    }

    public static String key(AdminPolicyKind kind, String name) {
        return kind.shortName() + ":" + name;
    }
}
