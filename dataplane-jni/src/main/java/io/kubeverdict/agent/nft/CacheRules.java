// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import java.util.List;

/**
 * The verdict cache's part of our table (docs/design/verdict-cache.md): its sets, counters and
 * rules in the text {@link RulesetRenderer} writes, and the commands that empty it, arm it with a
 * generation's tag and keep it alive. Pure text, like the renderer.
 */
public final class CacheRules {
    /** The verdict cache: remembered keys, and the current generation's tag, per family. */
    public static final String CACHE_V4 = "cache4";

    public static final String CACHE_V6 = "cache6";
    public static final String CACHE_TAG_V4 = "cachetag4";
    public static final String CACHE_TAG_V6 = "cachetag6";
    /**
     * The cache answers only while its agent lives: these sets hold their family's nfproto with a
     * timeout of {@link CacheSettings#LIVENESS_SECONDS} that the agent renews ({@link #cacheAlive});
     * a killed agent's cache stops accepting within that time (its connections then meet the queue
     * without a listener: dropped when fail-closed, accepted by bypass when fail-open).
     */
    public static final String CACHE_LIVE_V4 = "cachelive4";

    public static final String CACHE_LIVE_V6 = "cachelive6";
    /** Named counters (a 4 or 6 appended): new connections accepted from the cache, keys offered to it. */
    public static final String CACHE_HITS = "cachehits";

    public static final String CACHE_ADDS = "cacheadds";

    /** The chain a judged, cacheable first packet is sent round to ({@link #repeatRule}). */
    public static final String CHAIN_CACHE_ADD = "cache_add";

    private static final String ADMIT = "ct mark set ct mark | " + FlowMarks.hex(FlowMarks.ADMITTED);
    private static final String TAGGED = "meta mark & " + CacheMarks.hex(CacheMarks.MASK);

    private CacheRules() {}

    /** The cache's sets and counters in a table of these families; nothing when the cache is off. */
    static void declare(StringBuilder s, CacheSettings cache, int cacheMark, boolean v4, boolean v6) {
        if (!cache.enabled()) {
            return;
        }
        List<String> tag = cacheMark == 0 ? List.of() : List.of(CacheMarks.hex(cacheMark));
        if (v4) {
            cacheSet(s, CACHE_V4, "ipv4_addr", cache);
            RulesetRenderer.set(s, CACHE_TAG_V4, "mark", tag);
            liveSet(s, CACHE_LIVE_V4, "ipv4");
            s.append("\tcounter ").append(CACHE_HITS).append("4 {\n\t}\n");
            s.append("\tcounter ").append(CACHE_ADDS).append("4 {\n\t}\n");
        }
        if (v6) {
            cacheSet(s, CACHE_V6, "ipv6_addr", cache);
            RulesetRenderer.set(s, CACHE_TAG_V6, "mark", tag);
            liveSet(s, CACHE_LIVE_V6, "ipv6");
            s.append("\tcounter ").append(CACHE_HITS).append("6 {\n\t}\n");
            s.append("\tcounter ").append(CACHE_ADDS).append("6 {\n\t}\n");
        }
    }

    /** The key of a connection in the verdict cache, per family. */
    private static String cacheKey(boolean v4) {
        return v4 ? "ip saddr . ip daddr . meta l4proto . th dport" : "ip6 saddr . ip6 daddr . meta l4proto . th dport";
    }

    /** Only protocols whose fourth and fifth bytes of the transport header are a destination port. */
    private static final String CACHED_PROTOCOLS = "meta l4proto { tcp, udp, sctp }";

    /** A new connection whose key the cache holds: marked admitted (as a queued accept is) and accepted here. */
    static void hitRules(StringBuilder s, CacheSettings cache, boolean v4, boolean v6) {
        if (!cache.enabled()) {
            return;
        }
        if (v4) {
            s.append("\t\tct state new ")
                    .append(CACHED_PROTOCOLS)
                    .append(" meta nfproto @")
                    .append(CACHE_LIVE_V4)
                    .append(' ')
                    .append(cacheKey(true))
                    .append(" @")
                    .append(CACHE_V4)
                    .append(" counter name ")
                    .append(CACHE_HITS)
                    .append("4 ")
                    .append(ADMIT)
                    .append(" accept\n");
        }
        if (v6) {
            s.append("\t\tct state new ")
                    .append(CACHED_PROTOCOLS)
                    .append(" meta nfproto @")
                    .append(CACHE_LIVE_V6)
                    .append(' ')
                    .append(cacheKey(false))
                    .append(" @")
                    .append(CACHE_V6)
                    .append(" counter name ")
                    .append(CACHE_HITS)
                    .append("6 ")
                    .append(ADMIT)
                    .append(" accept\n");
        }
    }

    /**
     * In a hook's base chain: a first packet the agent accepted as cacheable comes round the chain
     * again (NF_REPEAT) with tag bits in its skb mark, on a connection our judge chain marked
     * admitted before queueing it. A packet that merely arrives with such bits (someone else's)
     * is, on a new connection, judged as any other; only a retransmitted first packet of a
     * connection admitted before passes with them, as its connection did.
     */
    static void repeatRule(StringBuilder s, CacheSettings cache) {
        if (!cache.enabled()) {
            return;
        }
        s.append("\t\t")
                .append(TAGGED)
                .append(" != 0 ct mark & ")
                .append(FlowMarks.hex(FlowMarks.ADMITTED))
                .append(" == ")
                .append(FlowMarks.hex(FlowMarks.ADMITTED))
                .append(" goto ")
                .append(CHAIN_CACHE_ADD)
                .append('\n');
    }

    /**
     * The packet of {@link #repeatRule}: with the current generation's tag its key is added; then
     * the tag bits are cleared, whatever generation they name (a packet never leaves with them),
     * and it is accepted, the agent's verdict.
     */
    static void addChain(StringBuilder s, CacheSettings cache, boolean v4, boolean v6) {
        if (!cache.enabled()) {
            return;
        }
        s.append("\tchain ").append(CHAIN_CACHE_ADD).append(" {\n");
        if (v4) {
            s.append("\t\t")
                    .append(TAGGED)
                    .append(" @")
                    .append(CACHE_TAG_V4)
                    .append(' ')
                    .append(CACHED_PROTOCOLS)
                    .append(" add @")
                    .append(CACHE_V4)
                    .append(" { ")
                    .append(cacheKey(true))
                    .append(" } counter name ")
                    .append(CACHE_ADDS)
                    .append("4\n");
        }
        if (v6) {
            s.append("\t\t")
                    .append(TAGGED)
                    .append(" @")
                    .append(CACHE_TAG_V6)
                    .append(' ')
                    .append(CACHED_PROTOCOLS)
                    .append(" add @")
                    .append(CACHE_V6)
                    .append(" { ")
                    .append(cacheKey(false))
                    .append(" } counter name ")
                    .append(CACHE_ADDS)
                    .append("6\n");
        }
        s.append("\t\tmeta mark set meta mark & ")
                .append(CacheMarks.hex(~CacheMarks.MASK))
                .append(" accept\n\t}\n");
    }

    /**
     * Takes the tags away: from the commit on no packet adds a key (the adding rules look them up);
     * empty when the cache is off. The first step of a generation change.
     */
    public static String cacheClose(RulesetConfig config) {
        if (!config.cache().enabled()) {
            return "";
        }
        return "flush set " + RulesetRenderer.setRef(config, CACHE_TAG_V4) + "\nflush set "
                + RulesetRenderer.setRef(config, CACHE_TAG_V6) + "\n";
    }

    /**
     * Empties the verdict cache and makes {@code cacheMark} the only tag whose packets may add keys
     * (0: none may); empty when the cache is off. Runs before each generation's index is swapped in,
     * after {@link #cacheClose} and the wait for older verdicts, so no key remembered under an
     * earlier state answers for the new one (docs/design/verdict-cache.md).
     */
    public static String cacheReset(RulesetConfig config, int cacheMark) {
        if (!config.cache().enabled()) {
            return "";
        }
        StringBuilder s = new StringBuilder();
        for (String set : List.of(CACHE_TAG_V4, CACHE_TAG_V6, CACHE_V4, CACHE_V6)) {
            s.append("flush set ").append(RulesetRenderer.setRef(config, set)).append('\n');
        }
        if (cacheMark != 0) {
            RulesetRenderer.elements(s, "add", config, CACHE_TAG_V4, List.of(CacheMarks.hex(cacheMark)));
            RulesetRenderer.elements(s, "add", config, CACHE_TAG_V6, List.of(CacheMarks.hex(cacheMark)));
        }
        return s.toString();
    }

    /**
     * Renews the cache's liveness elements for another {@link CacheSettings#LIVENESS_SECONDS}
     * (re-adding one that expired); empty when the cache is off. Add, delete, add in one
     * transaction: an element's timeout is set when it is added.
     */
    public static String cacheAlive(RulesetConfig config) {
        if (!config.cache().enabled()) {
            return "";
        }
        StringBuilder s = new StringBuilder();
        for (String[] live : new String[][] {{CACHE_LIVE_V4, "ipv4"}, {CACHE_LIVE_V6, "ipv6"}}) {
            String element = " { " + live[1] + " timeout " + CacheSettings.LIVENESS_SECONDS + "s }\n";
            String ref = RulesetRenderer.setRef(config, live[0]);
            s.append("add element ").append(ref).append(element);
            s.append("delete element ")
                    .append(ref)
                    .append(" { ")
                    .append(live[1])
                    .append(" }\n");
            s.append("add element ").append(ref).append(element);
        }
        return s.toString();
    }

    /** Ends the cache's liveness at once (a clean stop that keeps the table); empty when the cache is off. */
    public static String cacheDead(RulesetConfig config) {
        if (!config.cache().enabled()) {
            return "";
        }
        return "flush set " + RulesetRenderer.setRef(config, CACHE_LIVE_V4) + "\nflush set "
                + RulesetRenderer.setRef(config, CACHE_LIVE_V6) + "\n";
    }

    private static void liveSet(StringBuilder s, String name, String nfproto) {
        s.append("\tset ")
                .append(name)
                .append(" {\n\t\ttype nf_proto\n\t\tflags timeout\n\t\telements = { ")
                .append(nfproto)
                .append(" timeout ")
                .append(CacheSettings.LIVENESS_SECONDS)
                .append("s }\n\t}\n");
    }

    private static void cacheSet(StringBuilder s, String name, String addressType, CacheSettings cache) {
        s.append("\tset ")
                .append(name)
                .append(" {\n\t\ttype ")
                .append(addressType)
                .append(" . ")
                .append(addressType)
                .append(" . inet_proto . inet_service\n\t\tflags dynamic,timeout\n\t\ttimeout ")
                .append(cache.ttlSeconds())
                .append("s\n\t\tsize ")
                .append(cache.size())
                .append(cache.counters() ? "\n\t\tcounter" : "") // updated by every lookup that finds the key
                .append("\n\t}\n");
    }
}
