// SPDX-License-Identifier: Apache-2.0
/**
 * The verdict function: a {@link io.kubeverdict.proto.v1.NodeSnapshot} compiled by
 * {@link io.kubeverdict.policy.SnapshotIndex#compile} into an immutable index that decides
 * packets ({@link io.kubeverdict.policy.SnapshotIndex#decide}, zero allocation, an int
 * {@link io.kubeverdict.policy.Decision} code). Words are kept apart from the hot path:
 * {@link io.kubeverdict.policy.DecisionText} names what a code says,
 * {@link io.kubeverdict.policy.Explainer} explains tuples (both directions, in words). Semantics
 * are policy.proto's; where the contract is silent the index allows less (unknown actions deny,
 * broken references match nothing) and counts the problem. Pure: no I/O, clock or threads.
 */
package io.kubeverdict.policy;
