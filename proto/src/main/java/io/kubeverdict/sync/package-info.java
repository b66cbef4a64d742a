/**
 * Agent-side state of the PolicySync stream: {@link io.kubeverdict.sync.SnapshotAssembler}
 * applies ToAgent messages and renders the current NodeSnapshot; a
 * {@link io.kubeverdict.sync.ResyncRequiredException} tells the caller to resync. Pure.
 */
package io.kubeverdict.sync;
