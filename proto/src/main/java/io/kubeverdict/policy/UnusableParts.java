// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * What the parts of one rule that the compiler cannot use do to that rule, and how each is
 * reported. A part is unusable when it is a peer set that is missing or not of type IP, a peer of
 * no kind this build knows, an invalid cidr or except, a domain-name peer without patterns or in
 * an inbound rule, or a port clause that is invalid or names a missing or wrong-type set: most
 * often a newer control plane's addition during a rolling upgrade, or a set not yet received.
 *
 * <p>The rule fails closed, by its action:
 * <ul>
 *   <li>an Allow: the part matches nothing and the rest of the rule stays. It then allows less than
 *       written, never more; in the NetworkPolicy tier the pod stays isolated.</li>
 *   <li>a Deny (or an unknown action, read as Deny): the rule denies every packet of its direction,
 *       every peer and every port. The part could have matched anything, so only all of it is sure
 *       to cover what the rule was written to stop; matching nothing would let that through.</li>
 *   <li>a Pass: the same "Deny all". Neither reading of the part is safe for a Pass: matching
 *       nothing lets the tier's later rules (an Allow) decide what was meant for the tiers below,
 *       matching everything skips the tier's later Deny rules. Denying is never more permissive
 *       than the rule as written, whatever the part meant.</li>
 * </ul>
 * This is the control plane's own rule for unusable parts of admin-tier policies (its reader makes
 * such a Deny or Pass "Deny all"), so both ends of a version skew agree.
 */
final class UnusableParts {

    private final String where;
    private final boolean deniesAll;
    private final ProblemList problems;
    private boolean found;

    /**
     * @param where the rule, for problems: "policy TIER/NAME rule ID"
     * @param action the rule's compiled action ({@link SnapshotCompiler#ACTION_ALLOW} and so on)
     */
    UnusableParts(String where, int action, ProblemList problems) {
        this.where = where;
        this.deniesAll = action != SnapshotCompiler.ACTION_ALLOW;
        this.problems = problems;
    }

    /** The rule, for problems about it. */
    String where() {
        return where;
    }

    /** Reports one unusable part, described as "what it is and why", e.g. "peer ip set s is missing". */
    void add(String part) {
        found = true;
        problems.add(where + ": " + part
                + (deniesAll ? "; the rule denies all (every peer and port)" : "; it matches nothing"));
    }

    /** Whether the rule is to be compiled as "Deny all": a Deny or Pass with an unusable part. */
    boolean ruleDeniesAll() {
        return found && deniesAll;
    }
}
