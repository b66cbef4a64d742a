// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Nftables;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The verdict cache as the kernel counts it, both families added up: new connections accepted from
 * it, keys offered to it by tagged first packets (an offer of a key it holds, or to a full set,
 * adds nothing), and the keys it holds now.
 */
public record CacheCounters(long hits, long adds, long entries) {
    public static final CacheCounters NONE = new CacheCounters(0, 0, 0);

    private static final Pattern PACKETS = Pattern.compile("packets (\\d+)");
    private static final Pattern EXPIRES = Pattern.compile("\\bexpires\\b");

    /**
     * Lists the cache's counters and sets of the table(s) {@code config} describes, through
     * {@code nft} (a context of the caller's: libnftables contexts are not shared between threads).
     * Zeros when the configuration has no cache.
     */
    public static CacheCounters read(Nftables nft, RulesetConfig config) {
        if (!config.cache().enabled()) {
            return NONE;
        }
        long hits = 0;
        long adds = 0;
        long entries = 0;
        for (boolean v4 : new boolean[] {true, false}) {
            String table = RulesetRenderer.tableRef(config, v4);
            String suffix = v4 ? "4" : "6";
            hits += packets(nft.run("list counter " + table + " " + CacheRules.CACHE_HITS + suffix));
            adds += packets(nft.run("list counter " + table + " " + CacheRules.CACHE_ADDS + suffix));
            entries += elements(nft.run("list set " + table + " " + (v4 ? CacheRules.CACHE_V4 : CacheRules.CACHE_V6)));
        }
        return new CacheCounters(hits, adds, entries);
    }

    /** The packet count of nft's listing of one named counter. */
    static long packets(String listing) {
        Matcher m = PACKETS.matcher(listing);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** How many elements nft's listing of a set with timeouts holds (each is listed with "expires"). */
    static long elements(String listing) {
        Matcher m = EXPIRES.matcher(listing);
        long n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
