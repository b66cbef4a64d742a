package io.kubeverdict.agent.dns;

import io.kubeverdict.policy.DomainPattern;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the DNS thread does with one queued response packet: find the pod it is for, parse the
 * message(s) it carries, and put every address whose name (or a name on its CNAME chain) matches
 * a pattern the pod watches into the pod's learned set of that pattern's domain set, for the
 * answer's TTL clamped to [minTtl, maxTtl]. Only UDP answers teach ({@link #tcp}). The caller accepts the packet afterwards, whatever
 * the outcome: this is not a DNS firewall. Allocates nothing for a response whose names and
 * addresses are already known; not thread-safe (one per DNS thread).
 */
public final class DnsLearner {
    /** Outcomes, counted in {@link #counts()} (index = outcome). */
    public static final int LEARNED = 0;        // a response that taught at least one new address
    public static final int REFRESHED = 1;      // matched, every address already known
    public static final int NO_MATCH = 2;       // a response for names the pod does not watch
    public static final int NOT_WATCHED = 3;    // for an address that is no watching pod
    public static final int NOT_DNS = 4;        // not UDP/TCP from port 53, or no message (TCP ACK)
    public static final int NOT_A_RESPONSE = 5;
    public static final int TRUNCATED = 6;      // TC set, or a cut copy
    public static final int MALFORMED = 7;
    public static final int UNSUPPORTED = 8;
    public static final int SET_FULL = 9;       // matched, but the node was full and the pod's set empty
    public static final int TCP_NOT_LEARNED = 10; // DNS over TCP: never learned from (see learn)
    static final String[] OUTCOMES = {"learned", "refreshed", "no_match", "not_watched", "not_dns",
        "not_a_response", "truncated", "malformed", "unsupported", "set_full", "tcp_not_learned"};

    private static final long NANOS = 1_000_000_000L;
    private static final int MAX_WATCHES = 64;

    private static final Logger log = LoggerFactory.getLogger(DnsLearner.class);

    private final DnsSegment segment = new DnsSegment();
    private boolean tcpLogged;
    private final DnsResponseParser parser = new DnsResponseParser();
    private final long[] chainMask = new long[DnsResponseParser.MAX_CHAIN];
    private final long minTtlSeconds;
    private final long maxTtlSeconds;
    private final AtomicLongArray counts = new AtomicLongArray(OUTCOMES.length);
    private final AtomicLongArray learnedAddresses = new AtomicLongArray(1);
    private final AtomicLongArray answers = new AtomicLongArray(1);

    public DnsLearner(long minTtlSeconds, long maxTtlSeconds) {
        if (minTtlSeconds < 0 || maxTtlSeconds < minTtlSeconds) {
            throw new IllegalArgumentException("TTL bounds must be 0 <= min <= max, got " + minTtlSeconds + ", " + maxTtlSeconds);
        }
        this.minTtlSeconds = minTtlSeconds;
        this.maxTtlSeconds = maxTtlSeconds;
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
        int endpoint = view == null ? -1 : view.index().endpointAt(segment.family, segment.dstHi, segment.dstLo);
        if (endpoint < 0 || view.watches(endpoint).length == 0) {
            return NOT_WATCHED;
        }
        if (segment.protocol == DnsSegment.TCP) {
            return tcp();
        }
        return message(view, endpoint, buf, segment.payloadOffset, segment.payloadLength);
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
            case DnsResponseParser.OK -> { }
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
        answers.addAndGet(0, parser.answerCount());
        int[] watches = view.watches(endpoint);
        int watched = Math.min(watches.length, MAX_WATCHES);
        byte[] names = parser.chainNames();
        long any = 0;
        for (int c = 0; c < parser.chainCount(); c++) {
            int parent = parser.chainParent(c);
            long mask = parent >= 0 ? chainMask[parent] : 0;
            for (int w = 0; w < watched; w++) {
                if ((mask & (1L << w)) == 0 && matches(view.patterns(watches[w]), names, parser.chainOffset(c),
                        parser.chainNameLength(c))) {
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
                int r = set.learn(parser.addressFamily(a), parser.addressHi(a), parser.addressLo(a), expiresAt,
                        names, parser.chainOffset(0), parser.chainNameLength(0));
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

    /** Answer records seen in responses to watching pods. */
    public long answersSeen() {
        return answers.get(0);
    }

    /** Addresses new to a pod's set. */
    public long addressesLearned() {
        return learnedAddresses.get(0);
    }
}
