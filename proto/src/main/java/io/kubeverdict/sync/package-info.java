/**
 * {@link io.kubeverdict.sync.ManifestRevision}: the revision of a manifest directory that
 * ListNodesResponse.source_revision reports. (The agent's stream state, SnapshotAssembler, lives
 * in the agent: io.kubeverdict.agent.sync.)
 */
package io.kubeverdict.sync;
