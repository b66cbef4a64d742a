// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which objects of a manifest directory are read, which are skipped, and which are refused (pure:
 * apiVersion and kind in, a verdict out). What is skipped is left out of the cluster, and a
 * left-out policy allows: so whatever could be meant as a policy, or as a namespace, pod or node a
 * policy selects, is read exactly or refused, never skipped:
 * <ul>
 * <li>a kind read ({@link #READ}) in another apiVersion ({@code apiVersion: v1, kind: NetworkPolicy});
 * <li>any other kind, or version, of the policy groups networking.k8s.io and policy.networking.k8s.io
 *     (but for the few networking.k8s.io kinds that are no policies: {@link #NETWORKING_NOT_POLICIES});
 * <li>in any group, a near miss of a kind read ({@link #nearMiss}).
 * </ul>
 * Everything else (Deployments, Services, other groups' CRDs) is skipped.
 */
final class ManifestKinds {
    /** What to do with an object. */
    sealed interface Verdict {}

    /** One of the kinds the engine reads, in its apiVersion. */
    record Read(String apiVersion, String kind) implements Verdict {
        @Override
        public String toString() {
            return kind + " (" + apiVersion + ")";
        }
    }

    /** Not read, and not mistakable for what is: left out, only counted. */
    record Skip() implements Verdict {}

    /** Looks like something read but is not: the whole load is rejected with this reason. */
    record Refuse(String reason) implements Verdict {}

    static final List<Read> READ = read();

    /** networking.k8s.io kinds that select no traffic to allow or deny, and so may be skipped. */
    static final Set<String> NETWORKING_NOT_POLICIES = Set.of("Ingress", "IngressClass", "IPAddress", "ServiceCIDR");

    private static final String NETWORKING = "networking.k8s.io";
    private static final Set<String> POLICY_GROUPS = Set.of(NETWORKING, AdminPolicyKind.GROUP);
    private static final Skip SKIP = new Skip();

    private ManifestKinds() {}

    private static List<Read> read() {
        List<Read> out = new ArrayList<>(List.of(
                new Read("v1", "Namespace"),
                new Read("v1", "Pod"),
                new Read("v1", "Node"),
                new Read(NETWORKING + "/v1", "NetworkPolicy")));
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            out.add(new Read(k.apiVersion(), k.kind()));
        }
        return List.copyOf(out);
    }

    static Verdict classify(String apiVersion, String kind) {
        for (Read r : READ) {
            if (r.kind().equals(kind)) {
                return r.apiVersion().equals(apiVersion)
                        ? r
                        : new Refuse(kind + " of apiVersion " + apiVersion + " is not read: kube-verdict reads " + kind
                                + " of " + r.apiVersion() + " only");
            }
        }
        // Before the group rule: "did you mean" helps more than "not of this group".
        Read near = nearMiss(kind);
        if (near != null) {
            return new Refuse("\"" + kind + "\" is not a kind kube-verdict reads, and too close to " + near
                    + " to be skipped: a misspelt kind would be left out");
        }
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        if (group.equals(NETWORKING) && NETWORKING_NOT_POLICIES.contains(withoutListSuffix(kind))) {
            return SKIP;
        }
        if (POLICY_GROUPS.contains(group)) {
            return new Refuse(apiVersion + " " + kind + " is not read: of " + group + " kube-verdict reads "
                    + READ.stream()
                            .filter(r -> r.apiVersion().startsWith(group + "/"))
                            .map(Read::toString)
                            .collect(Collectors.joining(", "))
                    + ", and refuses the rest: a policy it does not read would be left out");
        }
        return SKIP;
    }

    /**
     * The kind read that {@code kind} is probably a misspelling of, or null. The rule: lower-cased,
     * without a "List" suffix and without a plural ending ("ies" for "y", or "s"), it is at most
     * 1 edit (2 for kinds read longer than 4 letters) from a kind read lower-cased, counting a
     * swap of adjacent letters as one edit. Short kinds get 1 so that real kinds stay apart: "Job"
     * is 2 edits from "Pod", "Role" 2 from "Node".
     */
    static Read nearMiss(String kind) {
        String lower = kind.toLowerCase(Locale.ROOT);
        String k = singular(lower.endsWith("list") ? lower.substring(0, lower.length() - "list".length()) : lower);
        for (Read r : READ) {
            String known = r.kind().toLowerCase(Locale.ROOT);
            if (EditDistance.atMost(k, known, known.length() <= 4 ? 1 : 2)) {
                return r;
            }
        }
        return null;
    }

    private static String withoutListSuffix(String kind) {
        return kind.endsWith("List") && kind.length() > "List".length()
                ? kind.substring(0, kind.length() - "List".length())
                : kind;
    }

    private static String singular(String k) {
        if (k.endsWith("ies") && k.length() > 3) {
            return k.substring(0, k.length() - 3) + "y";
        }
        return k.endsWith("s") && k.length() > 1 ? k.substring(0, k.length() - 1) : k;
    }
}
