// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/** Where our sets and chains live. */
public enum TableLayout {
    /** One {@code inet} table for both families (the default; nft_compat accepts inet on 6.x). */
    INET,
    /**
     * An {@code ip} table (IPv4 set and chains) and an {@code ip6} table (IPv6), both with our
     * name: for kernels whose nft_compat refuses the xtables NFQUEUE target in inet tables.
     */
    SPLIT
}
