// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's last enforced state on the node's disk: written after each enforced generation,
 * enforced at the next start before the control plane answers (a reboot, a restart while the
 * control plane is away). {@link io.kubeverdict.agent.persist.StateFileFormat} is the pure
 * encoding and its checks, {@link io.kubeverdict.agent.persist.StateFile} the file I/O, and
 * {@link io.kubeverdict.agent.persist.StateWriter} the thread that writes behind enforcement.
 */
package io.kubeverdict.agent.persist;
