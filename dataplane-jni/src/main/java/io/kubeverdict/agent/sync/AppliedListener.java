// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

/** Told after a sync burst's effect is in the kernel. Called on the sync thread; must not block. */
@FunctionalInterface
public interface AppliedListener {
    /**
     * @param sequence the stream sequence now enforced
     * @param eventTimeUnixNanos the control plane's time of the newest applied change, 0 if none
     */
    void applied(long sequence, long eventTimeUnixNanos);
}
