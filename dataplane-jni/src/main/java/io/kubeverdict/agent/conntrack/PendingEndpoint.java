// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.conntrack.AffectedEndpoints.Target;

/** An endpoint whose connections wait to be judged, since the (earliest) change that affected them. */
record PendingEndpoint(Target target, long sinceNanos) {
    PendingEndpoint merge(PendingEndpoint other) {
        return new PendingEndpoint(target.merge(other.target), Math.min(sinceNanos, other.sinceNanos));
    }
}
