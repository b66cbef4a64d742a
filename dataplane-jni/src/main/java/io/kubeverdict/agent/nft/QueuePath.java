// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/** How matching packets reach the NFQUEUE. */
public enum QueuePath {
    /** nft's own {@code queue} expression (nft_queue); absent on some kernels. */
    NFT_QUEUE,
    /** The xtables NFQUEUE target through nft_compat, installed into our table by the shim. */
    XT_NFQUEUE
}
