// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.kubeverdict.agent.nft.CacheRules;
import io.kubeverdict.agent.nft.RulesetConfig;
import io.kubeverdict.testing.TestNamespace;

/**
 * What the kernel of a test node says about an agent's queue and verdict cache: the queue's
 * packet count (/proc/net/netfilter/nfnetlink_queue) and the keys the cache sets hold (nft).
 */
public final class CacheProbe {
    private final TestNamespace node;
    private final int queue;

    public CacheProbe(TestNamespace node, int queue) {
        this.node = node;
        this.queue = queue;
    }

    /** Packets the kernel has put on the queue so far (its id sequence); fails when it is not bound. */
    public long queued() throws Exception {
        for (String line :
                node.exec("cat", "/proc/net/netfilter/nfnetlink_queue").split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 8 && f[0].equals(Integer.toString(queue))) {
                return Long.parseLong(f[7]);
            }
        }
        throw new AssertionError("queue " + queue + " not bound");
    }

    /** Keys the agent's cache holds, both families (one inet table, or ip + ip6 tables). */
    public int cachedKeys() throws Exception {
        return elements(CacheRules.CACHE_V4, "inet", "ip") + elements(CacheRules.CACHE_V6, "inet", "ip6");
    }

    /** Whether the cache answers (its IPv4 liveness element is present). */
    public boolean alive() throws Exception {
        return elements(CacheRules.CACHE_LIVE_V4, "inet", "ip") > 0;
    }

    /** Elements of a set of ours (each listed element has "expires"); fails when the set is in neither table. */
    private int elements(String set, String... families) throws Exception {
        for (String family : families) {
            TestNamespace.Result r = node.tryExec("nft", "list", "set", family, RulesetConfig.DEFAULT_TABLE, set);
            if (r.exitCode() == 0) {
                return r.output().split(" expires ", -1).length - 1;
            }
        }
        throw new AssertionError("set " + set + " in no table of ours");
    }
}
