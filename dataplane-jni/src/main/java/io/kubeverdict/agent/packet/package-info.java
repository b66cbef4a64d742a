// SPDX-License-Identifier: Apache-2.0
/** Header parsing of queued packets into {@link io.kubeverdict.policy.PacketTuple}, allocation-free. */
package io.kubeverdict.agent.packet;
