// SPDX-License-Identifier: Apache-2.0
/**
 * Our nftables table: {@link io.kubeverdict.agent.nft.RulesetRenderer} (pure: state to nft text),
 * {@link io.kubeverdict.agent.nft.NftManager} (applies it: start/replace leftovers, element diffs,
 * remove), {@link io.kubeverdict.agent.nft.QueuePathProbe} (nft queue expression or xtables
 * NFQUEUE through nft_compat). See docs/design/data-plane.md.
 */
package io.kubeverdict.agent.nft;
