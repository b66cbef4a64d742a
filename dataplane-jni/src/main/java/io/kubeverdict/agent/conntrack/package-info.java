// SPDX-License-Identifier: Apache-2.0
/**
 * Established connections follow the policy: after each applied generation, the connections of
 * the endpoints whose verdicts can have changed ({@link io.kubeverdict.agent.conntrack.AffectedEndpoints})
 * are dumped from conntrack with filters the kernel applies, judged again by the generation's
 * verdict function on their original tuple, and the denied ones are marked cut
 * ({@link io.kubeverdict.agent.conntrack.ConntrackRejudger}); the ruleset drops or resets their
 * packets in the kernel ({@link io.kubeverdict.agent.nft.FlowMarks}).
 */
package io.kubeverdict.agent.conntrack;
