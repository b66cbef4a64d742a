// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.List;

/**
 * A NetworkPolicy translated to the contract. The proto depends only on the policy itself (set
 * ids are derived from content), so it is built once per policy version.
 *
 * @param podSelector the pods (of {@code namespace}) the policy selects
 * @param ingress whether it isolates selected pods for ingress (policyTypes)
 * @param egress whether it isolates selected pods for egress
 * @param ipSets every IP set its rules refer to, distinct
 */
public record CompiledPolicy(
        String namespace,
        String name,
        Selector podSelector,
        boolean ingress,
        boolean egress,
        ActivePolicy proto,
        List<IpSetDef> ipSets,
        List<PolicyProblem> problems) {
    public String key() {
        return namespace + "/" + name;
    }
}
