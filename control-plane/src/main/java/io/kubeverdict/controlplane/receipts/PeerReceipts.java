// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import java.util.Collection;

/** The other control-plane replicas, asked what the agents reporting to them run. */
public interface PeerReceipts {
    /** No other replica: every agent that reports anywhere reports here. */
    PeerReceipts ALONE = (named, maxLagging) -> PeerAnswers.ALONE;

    /** Other replicas may exist but none is asked: their nodes' state is unknown here. */
    PeerReceipts NOT_ASKED = (named, maxLagging) -> PeerAnswers.UNKNOWN;

    /**
     * One round of questions, bounded in time; never throws (a peer that fails leaves the answers
     * incomplete).
     *
     * @param named the policies wanted; empty: every one
     * @param maxLagging lagging nodes named per policy
     */
    PeerAnswers ask(Collection<PolicyRef> named, int maxLagging);
}
