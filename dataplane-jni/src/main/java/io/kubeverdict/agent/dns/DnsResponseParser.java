// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.nio.ByteBuffer;

/**
 * Reads one DNS message (RFC 1035) into preallocated arrays, without allocating and without
 * throwing on any input: the question name, the CNAME chain that starts at it, and the A/AAAA
 * answers of names on that chain, each with its effective TTL (the smallest TTL on the way:
 * a CNAME that expires first ends the chain). Only the answer section counts; authority and
 * additional records (glue) are never learned from, nor are answers for names off the chain.
 *
 * <p>Names are decoded to lower-case dotted ASCII (no trailing dot). Compression pointers must
 * point strictly before the place they are read from, which ends every loop; a name longer than
 * 255 octets on the wire, a label type other than plain and pointer, or a label holding a dot is
 * malformed. A message whose header says it is no standard-query response, has the TC bit set,
 * asks other than exactly one question, or ends before its answer records do is not used
 * ({@link #parse} says why); the caller accepts such packets unchanged.
 *
 * <p>Not thread-safe: one parser per thread, reused for every message.
 */
public final class DnsResponseParser {
    /** A response with its chain and addresses filled in (possibly none). */
    public static final int OK = 0;
    /** A query, or a response to another opcode than QUERY. */
    public static final int NOT_A_RESPONSE = 1;
    /** The TC bit is set, or the bytes end before the header, question or answers do. */
    public static final int TRUNCATED = 2;
    /** A field is impossible: a bad label or pointer, a record overrunning the message, ... */
    public static final int MALFORMED = 3;
    /** Not exactly one question (nothing to anchor a chain to). */
    public static final int UNSUPPORTED = 4;
    /** {@link #parseQuery} only: a response, or a query of another opcode than QUERY. */
    public static final int NOT_A_QUERY = 5;

    public static final int TYPE_A = 1;
    public static final int TYPE_CNAME = 5;
    public static final int TYPE_AAAA = 28;
    private static final int CLASS_IN = 1;

    /** Longest dotted name: 255 octets on the wire. */
    public static final int MAX_NAME = 253;
    /** Answer records looked at; later ones are skipped (and counted). */
    public static final int MAX_RECORDS = 256;
    /** Names on a chain (the question name plus CNAME targets). */
    public static final int MAX_CHAIN = 16;

    private static final int NAME_SLOT = 256;

    // The chain: names (lower-case dotted), the chain index each was reached from, smallest TTL so far.
    private final byte[] chainNames = new byte[MAX_CHAIN * NAME_SLOT];
    private final int[] chainLength = new int[MAX_CHAIN];
    private final int[] chainParent = new int[MAX_CHAIN];
    private final long[] chainTtl = new long[MAX_CHAIN];
    private int chainCount;

    // Answer records of interest: owner name, type, TTL; CNAME target or address.
    private final byte[] ownerNames = new byte[MAX_RECORDS * NAME_SLOT];
    private final int[] ownerLength = new int[MAX_RECORDS];
    private final byte[] targetNames = new byte[MAX_RECORDS * NAME_SLOT];
    private final int[] targetLength = new int[MAX_RECORDS];
    private final int[] recordType = new int[MAX_RECORDS];
    private final long[] recordTtl = new long[MAX_RECORDS];
    private final long[] recordHi = new long[MAX_RECORDS];
    private final long[] recordLo = new long[MAX_RECORDS];
    private int recordCount;
    private int skippedRecords;
    /** Where names of records beyond MAX_RECORDS are decoded (walked only). */
    private final byte[] scratch = new byte[NAME_SLOT];

    // The addresses of names on the chain.
    private final int[] addressFamily = new int[MAX_RECORDS];
    private final long[] addressHi = new long[MAX_RECORDS];
    private final long[] addressLo = new long[MAX_RECORDS];
    private final long[] addressTtl = new long[MAX_RECORDS];
    private final int[] addressChain = new int[MAX_RECORDS];
    private int addressCount;

    /** Decodes names, without allocating; its last length is read right after each decode. */
    private final DnsNameDecoder nameDecoder = new DnsNameDecoder();

    private int answerCount;
    private int id;
    private int questionType;
    private int questionClass;

    /** Describes a result code (logs, metric tags). */
    public static String describe(int result) {
        return switch (result) {
            case OK -> "ok";
            case NOT_A_RESPONSE -> "not-a-response";
            case TRUNCATED -> "truncated";
            case MALFORMED -> "malformed";
            case UNSUPPORTED -> "unsupported";
            case NOT_A_QUERY -> "not-a-query";
            default -> "unknown";
        };
    }

    /**
     * Parses the message in {@code buf[offset, offset + length)} (absolute reads; position, limit
     * and byte order are neither used nor changed). On anything but {@link #OK} the results are
     * empty.
     */
    public int parse(ByteBuffer buf, int offset, int length) {
        chainCount = 0;
        recordCount = 0;
        addressCount = 0;
        skippedRecords = 0;
        answerCount = 0;
        if (offset < 0 || length < 0 || length > buf.capacity() - offset) {
            return MALFORMED;
        }
        int result = read(buf, offset, length);
        if (result != OK) {
            chainCount = 0;
            recordCount = 0;
            addressCount = 0;
            return result;
        }
        resolveChain();
        return OK;
    }

    /**
     * Reads a query's header and its one question (what {@link #id}, {@link #questionType},
     * {@link #questionClass} and chain name 0 then give): {@link #OK} for a standard query
     * (QR 0, opcode QUERY) with exactly one question, {@link #NOT_A_QUERY} for a response or
     * another opcode, else as {@link #parse}. No answers, chain or addresses.
     */
    public int parseQuery(ByteBuffer buf, int offset, int length) {
        chainCount = 0;
        recordCount = 0;
        addressCount = 0;
        skippedRecords = 0;
        answerCount = 0;
        if (offset < 0 || length < 0 || length > buf.capacity() - offset) {
            return MALFORMED;
        }
        if (length < 12) {
            return TRUNCATED;
        }
        int flags = u16(buf, offset + 2);
        if ((flags & 0x8000) != 0 || ((flags >>> 11) & 0xF) != 0) {
            return NOT_A_QUERY;
        }
        if (u16(buf, offset + 4) != 1) {
            return UNSUPPORTED;
        }
        int end = offset + length;
        int at = nameDecoder.decode(buf, offset, end, offset + 12, chainNames, 0);
        if (at < 0) {
            return -at;
        }
        if (at + 4 > end) {
            return TRUNCATED;
        }
        chainLength[0] = nameDecoder.length();
        chainParent[0] = -1;
        chainCount = 1;
        id = u16(buf, offset);
        questionType = u16(buf, at);
        questionClass = u16(buf, at + 2);
        return OK;
    }

    private int read(ByteBuffer buf, int base, int length) {
        if (length < 12) {
            return TRUNCATED;
        }
        int flags = u16(buf, base + 2);
        if ((flags & 0x8000) == 0 || ((flags >>> 11) & 0xF) != 0) {
            return NOT_A_RESPONSE;
        }
        if ((flags & 0x0200) != 0) {
            return TRUNCATED;
        }
        int questions = u16(buf, base + 4);
        answerCount = u16(buf, base + 6);
        if (questions != 1) {
            return UNSUPPORTED;
        }
        int end = base + length;
        int at = nameDecoder.decode(buf, base, end, base + 12, chainNames, 0);
        if (at < 0) {
            return -at;
        }
        chainLength[0] = nameDecoder.length();
        chainParent[0] = -1;
        chainTtl[0] = Long.MAX_VALUE;
        chainCount = 1;
        if (at + 4 > end) {
            return TRUNCATED;
        }
        id = u16(buf, base);
        questionType = u16(buf, at);
        questionClass = u16(buf, at + 2);
        at += 4;
        for (int i = 0; i < answerCount; i++) {
            int slot = recordCount < MAX_RECORDS ? recordCount : -1;
            int next = slot >= 0
                    ? nameDecoder.decode(buf, base, end, at, ownerNames, slot * NAME_SLOT)
                    : nameDecoder.decode(buf, base, end, at, scratch, 0); // decoded and forgotten: only walked
            if (next < 0) {
                return -next;
            }
            int owner = nameDecoder.length();
            if (next + 10 > end) {
                return TRUNCATED;
            }
            int type = u16(buf, next);
            int cls = u16(buf, next + 2);
            long ttl = u32(buf, next + 4);
            int rdLength = u16(buf, next + 8);
            int rdata = next + 10;
            if (rdata + rdLength > end) {
                return TRUNCATED;
            }
            at = rdata + rdLength;
            if (cls != CLASS_IN || (type != TYPE_A && type != TYPE_AAAA && type != TYPE_CNAME)) {
                continue;
            }
            if (slot < 0) {
                skippedRecords++;
                continue;
            }
            // RFC 2181 8: a TTL with the top bit set counts as zero.
            ttl = ttl > 0x7FFF_FFFFL ? 0 : ttl;
            if (type == TYPE_A) {
                if (rdLength != 4) {
                    return MALFORMED;
                }
                recordHi[slot] = 0;
                recordLo[slot] = u32(buf, rdata);
            } else if (type == TYPE_AAAA) {
                if (rdLength != 16) {
                    return MALFORMED;
                }
                recordHi[slot] = u32(buf, rdata) << 32 | u32(buf, rdata + 4);
                recordLo[slot] = u32(buf, rdata + 8) << 32 | u32(buf, rdata + 12);
            } else {
                int targetEnd = nameDecoder.decode(buf, base, end, rdata, targetNames, slot * NAME_SLOT);
                if (targetEnd < 0) {
                    return -targetEnd;
                }
                if (targetEnd != at) {
                    return MALFORMED; // the name must fill the rdata exactly
                }
                targetLength[slot] = nameDecoder.length();
            }
            ownerLength[slot] = owner;
            recordType[slot] = type;
            recordTtl[slot] = ttl;
            recordCount++;
        }
        return OK;
    }

    /** Follows CNAMEs from the question name (breadth first), then collects the chain's addresses. */
    private void resolveChain() {
        for (int c = 0; c < chainCount; c++) {
            for (int r = 0; r < recordCount; r++) {
                if (recordType[r] != TYPE_CNAME || !sameName(ownerNames, r * NAME_SLOT, ownerLength[r], c)) {
                    continue;
                }
                if (chainIndex(targetNames, r * NAME_SLOT, targetLength[r]) >= 0 || chainCount == MAX_CHAIN) {
                    continue; // a loop back onto the chain, or too long a chain
                }
                int n = chainCount++;
                System.arraycopy(targetNames, r * NAME_SLOT, chainNames, n * NAME_SLOT, targetLength[r]);
                chainLength[n] = targetLength[r];
                chainParent[n] = c;
                chainTtl[n] = Math.min(chainTtl[c], recordTtl[r]);
            }
        }
        for (int r = 0; r < recordCount; r++) {
            if (recordType[r] == TYPE_CNAME) {
                continue;
            }
            int c = chainIndex(ownerNames, r * NAME_SLOT, ownerLength[r]);
            if (c < 0) {
                continue;
            }
            int a = addressCount++;
            addressFamily[a] = recordType[r] == TYPE_A ? 4 : 6;
            addressHi[a] = recordHi[r];
            addressLo[a] = recordLo[r];
            addressTtl[a] = Math.min(chainTtl[c], recordTtl[r]);
            addressChain[a] = c;
        }
    }

    private int chainIndex(byte[] names, int from, int length) {
        for (int c = 0; c < chainCount; c++) {
            if (sameName(names, from, length, c)) {
                return c;
            }
        }
        return -1;
    }

    private boolean sameName(byte[] names, int from, int length, int chain) {
        if (chainLength[chain] != length) {
            return false;
        }
        int base = chain * NAME_SLOT;
        for (int i = 0; i < length; i++) {
            if (names[from + i] != chainNames[base + i]) {
                return false;
            }
        }
        return true;
    }

    private static int u16(ByteBuffer buf, int at) {
        return ((buf.get(at) & 0xff) << 8) | (buf.get(at + 1) & 0xff);
    }

    private static long u32(ByteBuffer buf, int at) {
        return ((long) u16(buf, at) << 16) | u16(buf, at + 2);
    }

    // ------------------------------------------------------------------ results of the last parse

    /** The message's ID (after OK). */
    public int id() {
        return id;
    }

    /** The question's QTYPE (after OK). */
    public int questionType() {
        return questionType;
    }

    /** The question's QCLASS (after OK). */
    public int questionClass() {
        return questionClass;
    }

    /** Answer records the header announced. */
    public int answerCount() {
        return answerCount;
    }

    /** A/AAAA/CNAME answers beyond {@link #MAX_RECORDS}, not used. */
    public int skippedRecords() {
        return skippedRecords;
    }

    /** Names on the chain: [0] the question name, then CNAME targets reached from it. */
    public int chainCount() {
        return chainCount;
    }

    /** The bytes holding chain name c, from {@link #chainOffset}, {@link #chainNameLength} long. */
    public byte[] chainNames() {
        return chainNames;
    }

    public int chainOffset(int c) {
        return c * NAME_SLOT;
    }

    public int chainNameLength(int c) {
        return chainLength[c];
    }

    /** The chain index a name was reached from (-1 for the question name). */
    public int chainParent(int c) {
        return chainParent[c];
    }

    public String chainName(int c) {
        return new String(chainNames, c * NAME_SLOT, chainLength[c], java.nio.charset.StandardCharsets.US_ASCII);
    }

    public int addressCount() {
        return addressCount;
    }

    /** 4 or 6. */
    public int addressFamily(int a) {
        return addressFamily[a];
    }

    /** IPv6: the high 64 bits; IPv4: 0. */
    public long addressHi(int a) {
        return addressHi[a];
    }

    /** IPv6: the low 64 bits; IPv4: the address in the low 32 bits. */
    public long addressLo(int a) {
        return addressLo[a];
    }

    /** Seconds: the smallest TTL on the way from the question name to this address. */
    public long addressTtl(int a) {
        return addressTtl[a];
    }

    /** The chain name whose record this address is. */
    public int addressChain(int a) {
        return addressChain[a];
    }
}
