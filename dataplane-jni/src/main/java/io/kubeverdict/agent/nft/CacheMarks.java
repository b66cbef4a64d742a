// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/**
 * The verdict cache's tag: a few bits of the packet's skb mark (not the ct mark) that the verdict
 * of a cacheable accept sets (with NF_REPEAT, so the packet passes its base chain again), and
 * that the table's {@value CacheRules#CHAIN_CACHE_ADD} chain reads to add the connection's key
 * to the cache when they equal the current generation's tag (sets
 * {@value CacheRules#CACHE_TAG_V4}/{@value CacheRules#CACHE_TAG_V6}). That chain clears them
 * again, so they live from the verdict to the second pass of the same chain, and only on first
 * packets of connections the agent judged.
 *
 * <p>Tags cycle 1..{@value #TAGS} (0 is "not cacheable"): consecutive generations always have
 * different tags, and a tag comes back only after the agent has seen every verdict of the
 * generations in between reach the kernel (see {@code io.kubeverdict.agent.state.CacheGenerations}),
 * so a small number of bits suffices. Bits 12-13 are clear of kube-proxy's 0x4000/0x8000, of
 * Calico's and Cilium's upper 16 bits and of Istio's 0x539; a verdict never tags a packet that
 * already carries bits there (it is accepted untagged and not cached).
 */
public final class CacheMarks {
    /** The skb mark bits of a tag. */
    public static final int MASK = 0x0000_3000;

    private static final int SHIFT = 12;
    /** Tags 1..TAGS. */
    public static final int TAGS = MASK >>> SHIFT;

    private CacheMarks() {}

    /** The mark bits of tag {@code tag} (1..{@link #TAGS}); 0 for 0. */
    public static int mark(int tag) {
        if (tag < 0 || tag > TAGS) {
            throw new IllegalArgumentException("cache tag must be 0.." + TAGS + ", got " + tag);
        }
        return tag << SHIFT;
    }

    /** The tag after {@code tag}: 1, 2, .., TAGS, 1, ... (never 0, never {@code tag}). */
    public static int next(int tag) {
        return tag % TAGS + 1;
    }

    static String hex(int mark) {
        return FlowMarks.hex(mark);
    }
}
