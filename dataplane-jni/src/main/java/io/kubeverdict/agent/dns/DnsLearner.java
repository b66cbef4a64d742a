// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.policy.DomainPattern;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the DNS thread does with one queued packet. A watching pod's UDP query to an allowed
 * resolver ({@link DnsResolvers}) is recorded ({@link OutstandingQueries}). A UDP response to a
 * watching pod teaches only if it answers such a recorded query (same flow reversed, same ID and
 * question; the record is consumed): then every address whose name (or a name on its CNAME
 * chain) matches a pattern the pod watches goes into the pod's learned set of that pattern's
 * domain set, for the answer's TTL clamped to [minTtl, maxTtl]. TCP never teaches ({@link #tcp}).
 * The caller accepts the packet afterwards, whatever the outcome: this is not a DNS firewall.
 * Allocates nothing for a query, nor for a response whose names and addresses are already known;
 * not thread-safe (one per DNS thread).
 */
public final class DnsLearner {
    /** Outcomes, counted in {@link #counts()} (index = outcome). */
    public static final int LEARNED = 0; // a response that taught at least one new address

    public static final int REFRESHED = 1; // matched, every address already known
    public static final int NO_MATCH = 2; // a response for names the pod does not watch
    public static final int NOT_WATCHED = 3; // for an address that is no watching pod
    public static final int NOT_DNS = 4; // not UDP/TCP from port 53, or no message (TCP ACK)
    public static final int NOT_A_RESPONSE = 5;
    public static final int TRUNCATED = 6; // TC set, or a cut copy
    public static final int MALFORMED = 7;
    public static final int UNSUPPORTED = 8;
    public static final int SET_FULL = 9; // matched, but the node was full and the pod's set empty
    public static final int TCP_NOT_LEARNED = 10; // DNS over TCP: never learned from (see tcp)
    public static final int QUERY_RECORDED = 11; // a watching pod's query to an allowed resolver
    public static final int QUERY_TO_OTHER_SERVER = 12; // ... to a server not in --dns-resolvers
    public static final int UNSOLICITED = 13; // a response no recorded query matches (ID, question, flow)
    static final String[] OUTCOMES = {
        "learned",
        "refreshed",
        "no_match",
        "not_watched",
        "not_dns",
        "not_a_response",
        "truncated",
        "malformed",
        "unsupported",
        "set_full",
        "tcp_not_learned",
        "query_recorded",
        "query_to_other_server",
        "unsolicited"
    };

    /** Queries in flight the node remembers at most, and a pod (more push out the oldest). */
    static final int QUERY_CAPACITY = 8192;

    static final int QUERIES_PER_POD = 256;
    /** How long a query waits for its answer (stub resolvers give up after 5 s, then retry). */
    static final long QUERY_LIFETIME_NANOS = 10_000_000_000L;

    private static final long NANOS = 1_000_000_000L;
    private static final int MAX_WATCHES = 64;

    private static final Logger log = LoggerFactory.getLogger(DnsLearner.class);

    private final DnsSegment segment = new DnsSegment();
    private boolean tcpLogged;
    private final DnsResponseParser parser = new DnsResponseParser();
    private final long[] chainMask = new long[DnsResponseParser.MAX_CHAIN];
    private final long minTtlSeconds;
    private final long maxTtlSeconds;
    private final DnsResolvers resolvers;
    private final OutstandingQueries queries =
            new OutstandingQueries(QUERY_CAPACITY, QUERIES_PER_POD, QUERY_LIFETIME_NANOS);
    private final AtomicLongArray counts = new AtomicLongArray(OUTCOMES.length);
    private final AtomicLongArray learnedAddresses = new AtomicLongArray(1);
    private final AtomicLongArray answers = new AtomicLongArray(1);

    /** @param resolvers the servers whose answers teach (their queries are recorded); none: nothing is learned */
    public DnsLearner(long minTtlSeconds, long maxTtlSeconds, DnsResolvers resolvers) {
        if (minTtlSeconds < 0 || maxTtlSeconds < minTtlSeconds) {
            throw new IllegalArgumentException(
                    "TTL bounds must be 0 <= min <= max, got " + minTtlSeconds + ", " + maxTtlSeconds);
        }
        this.minTtlSeconds = minTtlSeconds;
        this.maxTtlSeconds = maxTtlSeconds;
        this.resolvers = resolvers;
        if (resolvers.isEmpty()) {
            log.warn("no DNS resolvers (--dns-resolvers, or nameservers in /etc/resolv.conf): pods learn no "
                    + "addresses for domain names, so egress to domainNames peers is denied");
        } else {
            log.info("DNS answers teach only from {} and only in reply to a pod's own query", resolvers);
        }
    }

    public static String outcome(int outcome) {
        return OUTCOMES[outcome];
    }

    /** Handles the packet at buf[offset, offset + length); returns its outcome (also counted). */
    public int handle(LearnedAddressBook.View view, ByteBuffer buf, int offset, int length) {
        int outcome = learn(view, buf, offset, length);
        counts.incrementAndGet(outcome);
        return outcome;
    }

    private int learn(LearnedAddressBook.View view, ByteBuffer buf, int offset, int length) {
        int located = segment.locate(buf, offset, length);
        if (located != DnsSegment.OK) {
            return located == DnsSegment.NOT_DNS ? NOT_DNS : located == DnsSegment.TRUNCATED ? TRUNCATED : MALFORMED;
        }
        if (view == null) {
            return NOT_WATCHED;
        }
        if (segment.srcPort != DnsSegment.DNS_PORT) {
            return query(view, buf);
        }
        int endpoint = view.index().endpointAt(segment.family, segment.dstHi, segment.dstLo);
        if (endpoint < 0 || view.watches(endpoint).length == 0) {
            return NOT_WATCHED;
        }
        if (segment.protocol == DnsSegment.TCP) {
            return tcp();
        }
        return message(view, endpoint, buf, segment.payloadOffset, segment.payloadLength);
    }

    /**
     * A watching pod's query (to port 53, from another port): recorded when it goes to an
     * allowed resolver over UDP, so that its answer can teach. Queries over TCP are not
     * recorded (TCP answers never teach).
     */
    private int query(LearnedAddressBook.View view, ByteBuffer buf) {
        int endpoint = view.index().endpointAt(segment.family, segment.srcHi, segment.srcLo);
        if (endpoint < 0 || view.watches(endpoint).length == 0) {
            return NOT_WATCHED;
        }
        if (segment.protocol == DnsSegment.TCP) {
            return tcp();
        }
        if (!resolvers.contains(segment.family, segment.dstHi, segment.dstLo)) {
            return QUERY_TO_OTHER_SERVER;
        }
        int parsed = parser.parseQuery(buf, segment.payloadOffset, segment.payloadLength);
        if (parsed != DnsResponseParser.OK) {
            return parsed == DnsResponseParser.TRUNCATED
                    ? TRUNCATED
                    : parsed == DnsResponseParser.UNSUPPORTED
                            ? UNSUPPORTED
                            : parsed == DnsResponseParser.NOT_A_QUERY ? NOT_A_RESPONSE : MALFORMED;
        }
        queries.record(
                view,
                endpoint,
                segment.family,
                segment.srcHi,
                segment.srcLo,
                segment.srcPort,
                segment.dstHi,
                segment.dstLo,
                segment.dstPort,
                parser.id(),
                parser.questionType(),
                parser.questionClass(),
                parser.chainNames(),
                parser.chainOffset(0),
                parser.chainNameLength(0),
                view.now());
        return QUERY_RECORDED;
    }

    /**
     * DNS over TCP is never learned from (H3). A segment need not start a message: a response
     * longer than one segment goes on in the next, whose first bytes are then record data the
     * answer's zone chose, and parsing them as a length prefix and a message lets that zone
     * forge answers. Learning soundly needs each flow's message boundaries (its first sequence
     * number from the SYN-ACK, then every length prefix, dropping the flow on any gap) and the
     * pod's queries over the same stream; until that exists, TCP answers are counted and
     * accepted unlearned. Fail-closed: a name whose UDP answer was truncated (TC) and that the
     * pod's resolver then asks over TCP is not learned, so connections to its addresses are
     * denied until a UDP answer teaches them.
     */
    private int tcp() {
        if (!tcpLogged) {
            tcpLogged = true;
            log.info("DNS answers over TCP are not learned from (counted as kubeverdict_dns_responses"
                    + "{outcome=\"tcp_not_learned\"}): names answered only over TCP stay denied");
        }
        return TCP_NOT_LEARNED;
    }

    private int message(LearnedAddressBook.View view, int endpoint, ByteBuffer buf, int at, int length) {
        int parsed = parser.parse(buf, at, length);
        switch (parsed) {
            case DnsResponseParser.OK -> {}
            case DnsResponseParser.NOT_A_RESPONSE -> {
                return NOT_A_RESPONSE;
            }
            case DnsResponseParser.TRUNCATED -> {
                return TRUNCATED;
            }
            case DnsResponseParser.UNSUPPORTED -> {
                return UNSUPPORTED;
            }
            default -> {
                return MALFORMED;
            }
        }
        // Only the answer to a question this pod asked this resolver, in this flow, with this ID.
        if (!queries.consume(
                view,
                segment.family,
                segment.dstHi,
                segment.dstLo,
                segment.dstPort,
                segment.srcHi,
                segment.srcLo,
                segment.srcPort,
                parser.id(),
                parser.questionType(),
                parser.questionClass(),
                parser.chainNames(),
                parser.chainOffset(0),
                parser.chainNameLength(0),
                view.now())) {
            return UNSOLICITED;
        }
        answers.addAndGet(0, parser.answerCount());
        int[] watches = view.watches(endpoint);
        int watched = Math.min(watches.length, MAX_WATCHES);
        byte[] names = parser.chainNames();
        long any = 0;
        for (int c = 0; c < parser.chainCount(); c++) {
            int parent = parser.chainParent(c);
            long mask = parent >= 0 ? chainMask[parent] : 0;
            for (int w = 0; w < watched; w++) {
                if ((mask & (1L << w)) == 0
                        && matches(
                                view.patterns(watches[w]), names, parser.chainOffset(c), parser.chainNameLength(c))) {
                    mask |= 1L << w;
                }
            }
            chainMask[c] = mask;
            any |= mask;
        }
        if (any == 0 || parser.addressCount() == 0) {
            return NO_MATCH;
        }
        long now = view.now();
        int outcome = REFRESHED;
        for (int a = 0; a < parser.addressCount(); a++) {
            long mask = chainMask[parser.addressChain(a)];
            if (mask == 0) {
                continue;
            }
            long ttl = Math.max(minTtlSeconds, Math.min(maxTtlSeconds, parser.addressTtl(a)));
            long expiresAt = now + ttl * NANOS;
            for (int w = 0; w < watched; w++) {
                if ((mask & (1L << w)) == 0) {
                    continue;
                }
                LearnedSet set = view.set(endpoint, watches[w]);
                if (set == null) {
                    continue;
                }
                // the question name: what the pod asked for, shown by inspection and explain
                int r = set.learn(
                        parser.addressFamily(a),
                        parser.addressHi(a),
                        parser.addressLo(a),
                        expiresAt,
                        names,
                        parser.chainOffset(0),
                        parser.chainNameLength(0));
                if (r > 0) {
                    learnedAddresses.incrementAndGet(0);
                    outcome = LEARNED;
                } else if (r < 0 && outcome != LEARNED) {
                    outcome = SET_FULL;
                }
            }
        }
        return outcome;
    }

    private static boolean matches(DomainPattern[] patterns, byte[] name, int from, int length) {
        for (DomainPattern p : patterns) {
            if (p.matches(name, from, length)) {
                return true;
            }
        }
        return false;
    }

    /** Packets handled, by outcome (index as the constants). */
    public long count(int outcome) {
        return counts.get(outcome);
    }

    /** Queries in flight remembered now (DNS thread; tests). */
    int queriesInFlight() {
        return queries.size();
    }

    /** Recorded queries pushed out by newer ones of the same pod (it had too many in flight). */
    public long queryPodEvictions() {
        return queries.podEvictions();
    }

    /** Recorded queries pushed out by newer ones on the node (the node had too many in flight). */
    public long queryNodeEvictions() {
        return queries.nodeEvictions();
    }

    /** Answer records seen in responses to watching pods. */
    public long answersSeen() {
        return answers.get(0);
    }

    /** Addresses new to a pod's set. */
    public long addressesLearned() {
        return learnedAddresses.get(0);
    }
}
