// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.kubeverdict.proto.v1.LocalPolicyReceipt;
import io.kubeverdict.proto.v1.LocalReceipts;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the other control-plane replicas answered, in one round: per replica, the nodes reporting to
 * it and its statement per policy.
 *
 * @param complete whether every known peer answered: the nodes reporting to none of them are then
 *     known to report nowhere, else they may report to a replica that did not answer
 */
public record PeerAnswers(List<Answer> answers, boolean complete) {
    /** No peer is known: this replica may not be the only one (a Lease), nothing is said of other nodes. */
    public static final PeerAnswers UNKNOWN = new PeerAnswers(List.of(), false);

    /** The only replica: every node that reports anywhere reports here. */
    public static final PeerAnswers ALONE = new PeerAnswers(List.of(), true);

    /**
     * One peer's answer.
     *
     * @param reporting the nodes reporting to it, each with its name's hash (a statement's digest
     *     is their sum: hashed once per answer, not once per policy)
     */
    public record Answer(String replica, Map<String, Long> reporting, Map<PolicyRef, LocalPolicyReceipt> policies) {
        public static Answer of(LocalReceipts r) {
            Map<PolicyRef, LocalPolicyReceipt> byRef = new HashMap<>(r.getPoliciesCount() * 4 / 3 + 1);
            for (LocalPolicyReceipt p : r.getPoliciesList()) {
                byRef.put(new PolicyRef(p.getKind(), p.getNamespace(), p.getName()), p);
            }
            return new Answer(r.getReplica(), LocalStatements.hashes(r.getReportingNodesList()), byRef);
        }
    }
}
