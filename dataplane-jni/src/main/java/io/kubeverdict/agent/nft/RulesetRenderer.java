// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Turns the data plane's state into nft text (pure; {@link NftManager} applies it).
 *
 * <p>One {@code inet} table of ours ({@link TableLayout#INET}; or an {@code ip} plus an {@code ip6}
 * table with the same content split by family, {@link TableLayout#SPLIT}) holds two sets of selected
 * local pod IPs ({@value #SET_V4}, {@value #SET_V6}) and one base chain per hook, because every
 * packet of the node passes every base chain of its hook:
 * <ul>
 *   <li>{@code forward} (hook forward): a new connection (ct state new) from or to a selected pod
 *       goes to {@value #CHAIN_SELECTED} — pod-to-pod on this node and across nodes;</li>
 *   <li>{@code input} (hook input): a new connection from a selected pod to the node itself goes
 *       to {@value #CHAIN_SELECTED} (the pod's egress policy decides);</li>
 *   <li>in both, the pod address guard: a new connection from (or, forward, to) an address in the
 *       node's pod ranges ({@value #GUARD_V4}, {@value #GUARD_V6}) that is not among the known ones
 *       ({@value #KNOWN_V4}, {@value #KNOWN_V6}: every endpoint's, the node's own) goes to
 *       {@value #CHAIN_JUDGE} too, and the agent holds it until its state knows the address;</li>
 *   <li>{@value #CHAIN_SELECTED}: the verdict cache's hit rule, then {@value #CHAIN_JUDGE};</li>
 *   <li>{@value #CHAIN_JUDGE}: the connection's conntrack entry gets {@link FlowMarks#ADMITTED}
 *       (so the agent finds the connections it let in: a dropped first packet never confirms its
 *       entry, so only connections that went on keep the mark), counted, to the queue;</li>
 *   <li>{@value #CHAIN_QUEUE}: the one queue rule. With {@link QueuePath#NFT_QUEUE} it is
 *       {@code queue num N [bypass]}, or with several queues {@code queue num A-B fanout[,bypass]}
 *       (each packet to the queue of the CPU that handles it); with {@link QueuePath#XT_NFQUEUE} the text holds a
 *       placeholder ({@code accept} when fail-open, {@code drop} when fail-closed) that the shim
 *       swaps for the xtables NFQUEUE target in one transaction.</li>
 *   <li>{@value #CHAIN_CUT} (unless the cut action is {@link CutAction#NONE}): the first rule of
 *       forward, input and {@code output} sends every packet of a connection marked
 *       {@link FlowMarks#CUT} there, to be dropped (or answered with a TCP reset);</li>
 *   <li>the verdict cache (when {@link RulesetConfig#cache()} is on): sets {@value CacheRules#CACHE_V4}/{@value
 *       CacheRules#CACHE_V6} of (source, destination, protocol, destination port) keys with a timeout and a
 *       size bound. In {@value #CHAIN_SELECTED}, a new TCP, UDP or SCTP connection whose key is
 *       there is marked admitted and accepted without queueing while the agent lives ({@value
 *       CacheRules#CACHE_LIVE_V4}/{@value CacheRules#CACHE_LIVE_V6}, renewed by it) (counter {@value
 *       CacheRules#CACHE_HITS}4/6). A cacheable accept is the agent's NF_REPEAT with the
 *       generation's tag in the skb mark ({@link CacheMarks}): the packet passes its base chain
 *       again, where a tagged packet of an admitted connection goes to {@value
 *       CacheRules#CHAIN_CACHE_ADD}, which adds its key if the tag is the current one (sets {@value
 *       CacheRules#CACHE_TAG_V4}/{@value CacheRules#CACHE_TAG_V6}, counter {@value
 *       CacheRules#CACHE_ADDS}4/6), clears the tag bits and accepts. Every applied generation
 *       empties the cache sets and replaces the tag ({@link CacheRules#cacheReset}).</li>
 * </ul>
 * Nothing in the output hook is queued: connections the node itself opens (kubelet probes) are
 * never judged and stay allowed; the output chain only stops the node's side of cut connections.
 * Packets of established connections never match {@code ct state new}, so only a connection's
 * first packet is judged; when a change denies an established connection, the agent marks it cut.
 * Right after the cut rule, {@code ct state != new accept} lets every packet that is not a
 * connection's first one leave the chain at one test, so the packets of established connections,
 * most of a node's, pay two rules in one chain per hook.
 */
public final class RulesetRenderer {
    public static final String SET_V4 = "pods4";
    public static final String SET_V6 = "pods6";
    /** The pod address guard: the node's pod ranges, and the addresses in them the state knows. */
    public static final String GUARD_V4 = "guard4";

    public static final String GUARD_V6 = "guard6";
    public static final String KNOWN_V4 = "known4";
    public static final String KNOWN_V6 = "known6";
    public static final String CHAIN_QUEUE = "to_queue";
    /** Where new connections of selected pods go: the verdict cache, then {@value #CHAIN_JUDGE}. */
    public static final String CHAIN_SELECTED = "selected";
    /** Marks the connection {@link FlowMarks#ADMITTED}, counts it and sends it to the queue. */
    public static final String CHAIN_JUDGE = "judge";
    /**
     * Named counter of every packet the table sends to the queue chain. The kernel counts what the
     * queue took (ids) and what it dropped when full, but not what it let through by bypass (a
     * full queue when fail-open, or nobody listening): this count minus those two is that.
     */
    public static final String QUEUED_COUNTER = "queued";

    public static final String CHAIN_CUT = "cut";
    /** Marks the table as ours; a table with our name and this comment is a leftover of ours. */
    public static final String COMMENT = "managed by kube-verdict";

    private RulesetRenderer() {}

    /**
     * One transaction that removes any earlier table of ours, in any family and layout (each
     * {@code add table} makes the following delete valid when there is none), and builds the
     * table(s) anew with the given addresses.
     */
    public static String replaceTable(RulesetConfig config, PodAddresses addresses) {
        return replaceTable(config, addresses, 0);
    }

    /**
     * As {@link #replaceTable(RulesetConfig, PodAddresses)}, with an empty verdict cache whose
     * current tag is {@code cacheMark} ({@link CacheMarks#mark}; 0: nothing is added to the cache).
     */
    public static String replaceTable(RulesetConfig config, PodAddresses addresses, int cacheMark) {
        StringBuilder s = new StringBuilder(deleteTable(config));
        if (config.layout() == TableLayout.INET) {
            table(s, config, "inet", true, true, addresses, cacheMark);
        } else {
            table(s, config, "ip", true, false, addresses, cacheMark);
            table(s, config, "ip6", false, true, addresses, cacheMark);
        }
        return s.toString();
    }

    /** The families our table(s) have in this layout. */
    public static List<String> families(RulesetConfig config) {
        return config.layout() == TableLayout.INET ? List.of("inet") : List.of("ip", "ip6");
    }

    private static void table(
            StringBuilder s,
            RulesetConfig config,
            String family,
            boolean v4,
            boolean v6,
            PodAddresses addresses,
            int cacheMark) {
        boolean cuts = config.cutAction() != CutAction.NONE;
        CacheSettings cache = config.cache();
        s.append("table ").append(family).append(' ').append(config.table()).append(" {\n");
        s.append("\tcomment \"").append(COMMENT).append("\"\n");
        if (v4) {
            set(s, SET_V4, "ipv4_addr", addresses.v4());
            intervalSet(s, GUARD_V4, "ipv4_addr", addresses.guard().ranges4());
            set(s, KNOWN_V4, "ipv4_addr", addresses.guard().known4());
        }
        if (v6) {
            set(s, SET_V6, "ipv6_addr", addresses.v6());
            intervalSet(s, GUARD_V6, "ipv6_addr", addresses.guard().ranges6());
            set(s, KNOWN_V6, "ipv6_addr", addresses.guard().known6());
        }
        s.append("\tcounter ").append(QUEUED_COUNTER).append(" {\n\t}\n");
        CacheRules.declare(s, cache, cacheMark, v4, v6);
        s.append("\tchain ")
                .append(CHAIN_QUEUE)
                .append(" {\n\t\t")
                .append(queueStatement(config))
                .append("\n\t}\n");
        // A selected pod's new connection: the cache may answer it, else the queue. Unselected
        // connections never reach the cache's lookups.
        s.append("\tchain ").append(CHAIN_SELECTED).append(" {\n");
        CacheRules.hitRules(s, cache, v4, v6);
        s.append("\t\tgoto ").append(CHAIN_JUDGE).append("\n\t}\n");
        // Marked before the queue, not after: an accepted packet resumes at the hook's next base
        // chain, which would cost every packet of the node one more chain. A dropped first packet
        // never confirms its conntrack entry, so the mark stays only where the packet went on.
        s.append("\tchain ")
                .append(CHAIN_JUDGE)
                .append(" {\n\t\tct mark set ct mark | ")
                .append(FlowMarks.hex(FlowMarks.ADMITTED))
                .append(" counter name ")
                .append(QUEUED_COUNTER)
                .append(" goto ")
                .append(CHAIN_QUEUE)
                .append("\n\t}\n");
        CacheRules.addChain(s, cache, v4, v6);
        if (cuts) {
            s.append("\tchain ").append(CHAIN_CUT).append(" {\n");
            if (config.cutAction() == CutAction.RESET) {
                s.append("\t\tmeta l4proto tcp reject with tcp reset\n");
            }
            s.append("\t\tdrop\n\t}\n");
        }
        hookChain(s, "forward", cuts, cache, forwardMatches(v4, v6), guardForwardMatches(v4, v6));
        hookChain(s, "input", cuts, cache, inputMatches(v4, v6), guardInputMatches(v4, v6));
        if (cuts) {
            // Only cut connections: the node's replies on a pod's connection to it. Resets the
            // cut chain sends from the forward and input hooks leave through here: let them out.
            s.append("\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n");
            s.append("\t\t").append(cutMatch()).append(" tcp flags & rst == rst accept\n");
            s.append("\t\t")
                    .append(cutMatch())
                    .append(" goto ")
                    .append(CHAIN_CUT)
                    .append('\n');
            s.append("\t}\n");
        }
        s.append("}\n");
    }

    /** The one base chain of a hook: cuts, the early exit, a judged packet coming round again, selection, guard. */
    private static void hookChain(
            StringBuilder s,
            String hook,
            boolean cuts,
            CacheSettings cache,
            List<String> selectedMatches,
            List<String> guardMatches) {
        s.append("\tchain ")
                .append(hook)
                .append(" {\n\t\ttype filter hook ")
                .append(hook)
                .append(" priority filter; policy accept;\n");
        if (cuts) {
            s.append("\t\t")
                    .append(cutMatch())
                    .append(" goto ")
                    .append(CHAIN_CUT)
                    .append('\n');
        }
        onlyNew(s);
        CacheRules.repeatRule(s, cache);
        for (String match : selectedMatches) {
            gotoRule(s, match, CHAIN_SELECTED);
        }
        for (String match : guardMatches) {
            gotoRule(s, match, CHAIN_JUDGE);
        }
        s.append("\t}\n");
    }

    /** "family table" of the table holding a set or counter of this family (4 or 6). */
    static String tableRef(RulesetConfig config, boolean v4) {
        String family = config.layout() == TableLayout.INET ? "inet" : v4 ? "ip" : "ip6";
        return family + " " + config.table();
    }

    /** New connections from or to a selected pod, through the node. */
    private static List<String> forwardMatches(boolean v4, boolean v6) {
        List<String> matches = new ArrayList<>();
        if (v4) {
            matches.add("ip saddr @" + SET_V4);
            matches.add("ip daddr @" + SET_V4);
        }
        if (v6) {
            matches.add("ip6 saddr @" + SET_V6);
            matches.add("ip6 daddr @" + SET_V6);
        }
        return matches;
    }

    /** New connections from a selected pod to the node itself. */
    private static List<String> inputMatches(boolean v4, boolean v6) {
        List<String> matches = new ArrayList<>();
        if (v4) {
            matches.add("ip saddr @" + SET_V4);
        }
        if (v6) {
            matches.add("ip6 saddr @" + SET_V6);
        }
        return matches;
    }

    /** The pod address guard: new connections from or to a pod address of the node that the state does not know. */
    private static List<String> guardForwardMatches(boolean v4, boolean v6) {
        List<String> matches = new ArrayList<>();
        if (v4) {
            matches.add(unknown("ip saddr", GUARD_V4, KNOWN_V4));
            matches.add(unknown("ip daddr", GUARD_V4, KNOWN_V4));
        }
        if (v6) {
            matches.add(unknown("ip6 saddr", GUARD_V6, KNOWN_V6));
            matches.add(unknown("ip6 daddr", GUARD_V6, KNOWN_V6));
        }
        return matches;
    }

    /** The same towards the node itself. */
    private static List<String> guardInputMatches(boolean v4, boolean v6) {
        List<String> matches = new ArrayList<>();
        if (v4) {
            matches.add(unknown("ip saddr", GUARD_V4, KNOWN_V4));
        }
        if (v6) {
            matches.add(unknown("ip6 saddr", GUARD_V6, KNOWN_V6));
        }
        return matches;
    }

    /** An address in the guard's ranges that is not among the known ones (an empty range set matches nothing). */
    private static String unknown(String address, String ranges, String known) {
        return address + " @" + ranges + " " + address + " != @" + known;
    }

    private static String cutMatch() {
        return "ct mark & " + FlowMarks.hex(FlowMarks.CUT) + " == " + FlowMarks.hex(FlowMarks.CUT);
    }

    /**
     * Every rule after this one acts only on a connection's first packet (ct state new): the others
     * (established, related, invalid, untracked) leave the chain here, as they would after testing
     * each rule (the chains' policy is accept), at the cost of one test instead of one per rule.
     */
    private static void onlyNew(StringBuilder s) {
        s.append("\t\tct state != new accept\n");
    }

    private static void gotoRule(StringBuilder s, String match, String chain) {
        s.append("\t\tct state new ")
                .append(match)
                .append(" goto ")
                .append(chain)
                .append('\n');
    }

    /** The queue chain's rule as nft text (a placeholder on the xtables path). */
    public static String queueStatement(RulesetConfig config) {
        if (config.path() == QueuePath.XT_NFQUEUE) {
            return config.failOpen() ? "accept" : "drop";
        }
        if (config.queues() == 1) {
            return "queue num " + config.queueNumber() + (config.failOpen() ? " bypass" : "");
        }
        return "queue num " + config.queueNumber() + "-" + config.lastQueue()
                + (config.failOpen() ? " fanout,bypass" : " fanout");
    }

    /**
     * The element changes from {@code from} to {@code to} as one transaction: additions first,
     * then deletions; empty when nothing changes.
     */
    public static String diff(RulesetConfig config, PodAddresses from, PodAddresses to) {
        StringBuilder s = new StringBuilder();
        PodAddresses.Guard was = from.guard();
        PodAddresses.Guard now = to.guard();
        // Known addresses first, ranges last: an address is never unknown in between when it is known on both sides.
        elements(s, "add", config, KNOWN_V4, minus(now.known4(), was.known4()));
        elements(s, "add", config, KNOWN_V6, minus(now.known6(), was.known6()));
        elements(s, "add", config, SET_V4, minus(to.v4(), from.v4()));
        elements(s, "add", config, SET_V6, minus(to.v6(), from.v6()));
        elements(s, "delete", config, SET_V4, minus(from.v4(), to.v4()));
        elements(s, "delete", config, SET_V6, minus(from.v6(), to.v6()));
        elements(s, "delete", config, KNOWN_V4, minus(was.known4(), now.known4()));
        elements(s, "delete", config, KNOWN_V6, minus(was.known6(), now.known6()));
        if (!was.ranges4().equals(now.ranges4())) {
            s.append("flush set ").append(setRef(config, GUARD_V4)).append('\n');
            elements(s, "add", config, GUARD_V4, now.ranges4());
        }
        if (!was.ranges6().equals(now.ranges6())) {
            s.append("flush set ").append(setRef(config, GUARD_V6)).append('\n');
            elements(s, "add", config, GUARD_V6, now.ranges6());
        }
        return s.toString();
    }

    /** Sets both sets to exactly {@code to} in one transaction, whatever they hold now. */
    public static String resync(RulesetConfig config, PodAddresses to) {
        StringBuilder s = new StringBuilder();
        for (String set : List.of(SET_V4, SET_V6, GUARD_V4, GUARD_V6, KNOWN_V4, KNOWN_V6)) {
            s.append("flush set ").append(setRef(config, set)).append('\n');
        }
        elements(s, "add", config, SET_V4, to.v4());
        elements(s, "add", config, SET_V6, to.v6());
        elements(s, "add", config, KNOWN_V4, to.guard().known4());
        elements(s, "add", config, KNOWN_V6, to.guard().known6());
        elements(s, "add", config, GUARD_V4, to.guard().ranges4());
        elements(s, "add", config, GUARD_V6, to.guard().ranges6());
        return s.toString();
    }

    /** Removes our table(s) if they exist, whatever layout an earlier run used. */
    public static String deleteTable(RulesetConfig config) {
        StringBuilder s = new StringBuilder();
        for (String family : List.of("inet", "ip", "ip6")) {
            s.append("add table ")
                    .append(family)
                    .append(' ')
                    .append(config.table())
                    .append('\n');
            s.append("delete table ")
                    .append(family)
                    .append(' ')
                    .append(config.table())
                    .append('\n');
        }
        return s.toString();
    }

    /** "family table" of each of our tables (one inet table, or ip and ip6). */
    public static List<String> tableRefs(RulesetConfig config) {
        return config.layout() == TableLayout.INET
                ? List.of(tableRef(config, true))
                : List.of(tableRef(config, true), tableRef(config, false));
    }

    /** "family table set" of one of our sets. */
    static String setRef(RulesetConfig config, String set) {
        String family = config.layout() == TableLayout.INET ? "inet" : set.endsWith("4") ? "ip" : "ip6";
        return family + " " + config.table() + " " + set;
    }

    /** A set of CIDRs; overlapping ones merge. */
    private static void intervalSet(StringBuilder s, String name, String type, Collection<String> elements) {
        s.append("\tset ")
                .append(name)
                .append(" {\n\t\ttype ")
                .append(type)
                .append("\n\t\tflags interval\n\t\tauto-merge\n");
        if (!elements.isEmpty()) {
            s.append("\t\telements = { ").append(String.join(", ", elements)).append(" }\n");
        }
        s.append("\t}\n");
    }

    static void set(StringBuilder s, String name, String type, Collection<String> elements) {
        s.append("\tset ").append(name).append(" {\n\t\ttype ").append(type).append('\n');
        if (!elements.isEmpty()) {
            s.append("\t\telements = { ").append(String.join(", ", elements)).append(" }\n");
        }
        s.append("\t}\n");
    }

    static void elements(StringBuilder s, String verb, RulesetConfig config, String set, Collection<String> elements) {
        if (!elements.isEmpty()) {
            s.append(verb)
                    .append(" element ")
                    .append(setRef(config, set))
                    .append(" { ")
                    .append(String.join(", ", elements))
                    .append(" }\n");
        }
    }

    private static Set<String> minus(Set<String> a, Set<String> b) {
        TreeSet<String> out = new TreeSet<>(a);
        out.removeAll(b);
        return out;
    }
}
