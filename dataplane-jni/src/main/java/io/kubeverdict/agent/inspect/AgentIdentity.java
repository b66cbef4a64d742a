// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

/** Static facts about this agent, for GetStatus. */
public record AgentIdentity(String node, String version, String kernelPath, int queueId, boolean failOpen) {}
