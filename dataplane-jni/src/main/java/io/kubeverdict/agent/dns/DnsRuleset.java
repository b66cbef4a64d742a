// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.TableLayout;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The nft text of the DNS table (pure; {@link DnsTable} applies it): a table of its own, apart
 * from the policy table, holding the addresses of local pods that watch DNS answers
 * ({@value #SET_V4}, {@value #SET_V6}) and two base chains that send to the DNS queue: {@code
 * queries} (prerouting, before DNAT) every UDP packet such a pod sends to port 53 in the
 * <b>original direction</b> of its flow, and {@code answers} (postrouting, after NAT is undone;
 * answers from elsewhere and from the node itself, e.g. a node-local cache) every packet in the
 * <b>reply direction</b> of a UDP or TCP flow from port 53 to such a pod — established flows
 * included, but only replies to a flow the pod opened (conntrack). The agent then learns only
 * from an answer that matches a query it saw ({@link DnsLearner}); TCP answers are queued only to
 * be counted. The queue rule always bypasses: without a listener queries and answers pass
 * unlearned (their addresses stay denied).
 */
public final class DnsRuleset {
    public static final String DEFAULT_TABLE = "kube_verdict_dns";
    public static final String SET_V4 = "dns4";
    public static final String SET_V6 = "dns6";
    public static final String CHAIN_QUEUE = "to_dns_queue";
    public static final String CHAIN_QUERIES = "queries";
    public static final String CHAIN_ANSWERS = "answers";
    /** After conntrack (-200), before DNAT (-100): the query's destination is the Service IP the pod asked. */
    static final int QUERY_PRIORITY = -150;
    /** After SNAT and un-DNAT (100): the answer's source is the address the pod asked. */
    static final int ANSWER_PRIORITY = 150;

    public static final String COMMENT = "managed by kube-verdict: DNS answers for domain-name rules";

    private DnsRuleset() {}

    /** Removes any earlier DNS table of ours (any family) and builds it anew, in one transaction. */
    public static String replaceTable(
            String table, int queue, QueuePath path, TableLayout layout, PodAddresses watched) {
        StringBuilder s = new StringBuilder(deleteTable(table));
        if (layout == TableLayout.INET) {
            table(s, table, "inet", queue, path, true, true, watched);
        } else {
            table(s, table, "ip", queue, path, true, false, watched);
            table(s, table, "ip6", queue, path, false, true, watched);
        }
        return s.toString();
    }

    public static List<String> families(TableLayout layout) {
        return layout == TableLayout.INET ? List.of("inet") : List.of("ip", "ip6");
    }

    private static void table(
            StringBuilder s,
            String table,
            String family,
            int queue,
            QueuePath path,
            boolean v4,
            boolean v6,
            PodAddresses watched) {
        s.append("table ").append(family).append(' ').append(table).append(" {\n");
        s.append("\tcomment \"").append(COMMENT).append("\"\n");
        if (v4) {
            set(s, SET_V4, "ipv4_addr", watched.v4());
        }
        if (v6) {
            set(s, SET_V6, "ipv6_addr", watched.v6());
        }
        // The xtables path puts a placeholder here that the shim replaces; accept = what bypass does.
        s.append("\tchain ")
                .append(CHAIN_QUEUE)
                .append(" {\n\t\t")
                .append(path == QueuePath.XT_NFQUEUE ? "accept" : "queue num " + queue + " bypass")
                .append("\n\t}\n");
        // Queries before DNAT, answers after it is undone: both as the pod sees them (the DNS
        // Service's IP), which is what --dns-resolvers names and what the agent matches.
        s.append("\tchain ")
                .append(CHAIN_QUERIES)
                .append(" {\n\t\ttype filter hook prerouting priority ")
                .append(QUERY_PRIORITY)
                .append("; policy accept;\n");
        // Every packet of every pod passes these chains: the port, one load and compare, goes first
        // so that only DNS packets pay for the conntrack and set lookups.
        if (v4) {
            s.append("\t\tudp dport 53 ct direction original ip saddr @")
                    .append(SET_V4)
                    .append(" goto ")
                    .append(CHAIN_QUEUE)
                    .append('\n');
        }
        if (v6) {
            s.append("\t\tudp dport 53 ct direction original ip6 saddr @")
                    .append(SET_V6)
                    .append(" goto ")
                    .append(CHAIN_QUEUE)
                    .append('\n');
        }
        s.append("\t}\n");
        s.append("\tchain ")
                .append(CHAIN_ANSWERS)
                .append(" {\n\t\ttype filter hook postrouting priority ")
                .append(ANSWER_PRIORITY)
                .append("; policy accept;\n");
        for (String l4 : List.of("udp", "tcp")) {
            if (v4) {
                s.append("\t\t")
                        .append(l4)
                        .append(" sport 53 ct direction reply ip daddr @")
                        .append(SET_V4)
                        .append(" goto ")
                        .append(CHAIN_QUEUE)
                        .append('\n');
            }
            if (v6) {
                s.append("\t\t")
                        .append(l4)
                        .append(" sport 53 ct direction reply ip6 daddr @")
                        .append(SET_V6)
                        .append(" goto ")
                        .append(CHAIN_QUEUE)
                        .append('\n');
            }
        }
        s.append("\t}\n");
        s.append("}\n");
    }

    /** Element changes from one watched set to another (additions first); empty when equal. */
    public static String diff(String table, TableLayout layout, PodAddresses from, PodAddresses to) {
        StringBuilder s = new StringBuilder();
        elements(s, "add", table, layout, SET_V4, minus(to.v4(), from.v4()));
        elements(s, "add", table, layout, SET_V6, minus(to.v6(), from.v6()));
        elements(s, "delete", table, layout, SET_V4, minus(from.v4(), to.v4()));
        elements(s, "delete", table, layout, SET_V6, minus(from.v6(), to.v6()));
        return s.toString();
    }

    /** Both sets exactly {@code to}, whatever they hold. */
    public static String resync(String table, TableLayout layout, PodAddresses to) {
        StringBuilder s = new StringBuilder();
        s.append("flush set ").append(setRef(table, layout, SET_V4)).append('\n');
        s.append("flush set ").append(setRef(table, layout, SET_V6)).append('\n');
        elements(s, "add", table, layout, SET_V4, to.v4());
        elements(s, "add", table, layout, SET_V6, to.v6());
        return s.toString();
    }

    public static String deleteTable(String table) {
        StringBuilder s = new StringBuilder();
        for (String family : List.of("inet", "ip", "ip6")) {
            s.append("add table ").append(family).append(' ').append(table).append('\n');
            s.append("delete table ").append(family).append(' ').append(table).append('\n');
        }
        return s.toString();
    }

    static String setRef(String table, TableLayout layout, String set) {
        String family = layout == TableLayout.INET ? "inet" : set.equals(SET_V4) ? "ip" : "ip6";
        return family + " " + table + " " + set;
    }

    private static void set(StringBuilder s, String name, String type, Collection<String> elements) {
        s.append("\tset ").append(name).append(" {\n\t\ttype ").append(type).append('\n');
        if (!elements.isEmpty()) {
            s.append("\t\telements = { ").append(String.join(", ", elements)).append(" }\n");
        }
        s.append("\t}\n");
    }

    private static void elements(
            StringBuilder s, String verb, String table, TableLayout layout, String set, Collection<String> elements) {
        if (!elements.isEmpty()) {
            s.append(verb)
                    .append(" element ")
                    .append(setRef(table, layout, set))
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
