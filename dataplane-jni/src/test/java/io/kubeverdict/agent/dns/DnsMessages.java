// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Builds DNS messages as servers write them: names compressed against every suffix already
 * written (RFC 1035 4.1.4), the question echoed, answers in the order given.
 */
final class DnsMessages {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final Map<String, Integer> suffixes = new HashMap<>();
    private final boolean compress;
    private int answers;
    private int answerCountAt;

    private DnsMessages(int flags, int questions, boolean compress) {
        this.compress = compress;
        u16(0x1234);
        u16(flags);
        u16(questions);
        answerCountAt = out.size();
        u16(0);
        u16(0);
        u16(0);
    }

    /** A standard response (QR, RD, RA, NOERROR) to one question. */
    static DnsMessages response(String question, int qtype) {
        DnsMessages m = new DnsMessages(0x8180, 1, true);
        return m.name(question).u16(qtype).u16(1);
    }

    static DnsMessages withFlags(int flags, int questions, String question) {
        DnsMessages m = new DnsMessages(flags, questions, true);
        for (int i = 0; i < questions; i++) {
            m.name(question).u16(1).u16(1);
        }
        return m;
    }

    /** Without compression: every name written in full. */
    static DnsMessages uncompressed(String question, int qtype) {
        DnsMessages m = new DnsMessages(0x8180, 1, false);
        return m.name(question).u16(qtype).u16(1);
    }

    DnsMessages a(String owner, long ttl, String address) {
        byte[] a = parseV4(address);
        return record(owner, DnsResponseParser.TYPE_A, 1, ttl, a);
    }

    DnsMessages aaaa(String owner, long ttl, String address) {
        io.kubeverdict.policy.IpAddress a = io.kubeverdict.policy.IpAddress.parse(address);
        return record(
                owner,
                DnsResponseParser.TYPE_AAAA,
                1,
                ttl,
                java.nio.ByteBuffer.allocate(16).putLong(a.hi()).putLong(a.lo()).array());
    }

    DnsMessages cname(String owner, long ttl, String target) {
        name(owner).u16(DnsResponseParser.TYPE_CNAME).u16(1).u32(ttl);
        int lengthAt = out.size();
        u16(0);
        int start = out.size();
        name(target);
        patch16(lengthAt, out.size() - start);
        answers++;
        patch16(answerCountAt, answers);
        return this;
    }

    DnsMessages record(String owner, int type, int cls, long ttl, byte[] rdata) {
        name(owner).u16(type).u16(cls).u32(ttl).u16(rdata.length);
        out.writeBytes(rdata);
        answers++;
        patch16(answerCountAt, answers);
        return this;
    }

    /** Raw bytes appended (for broken messages). */
    DnsMessages raw(int... bytes) {
        for (int b : bytes) {
            out.write(b);
        }
        return this;
    }

    /** Sets the answer count the header announces. */
    DnsMessages announce(int count) {
        patch16(answerCountAt, count);
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    DnsMessages name(String name) {
        String rest = name;
        while (!rest.isEmpty()) {
            Integer at = compress ? suffixes.get(rest.toLowerCase()) : null;
            if (at != null) {
                u16(0xC000 | at);
                return this;
            }
            if (out.size() < 0x3FFF) {
                suffixes.put(rest.toLowerCase(), out.size());
            }
            int dot = rest.indexOf('.');
            String label = dot < 0 ? rest : rest.substring(0, dot);
            byte[] b = label.getBytes(StandardCharsets.US_ASCII);
            out.write(b.length);
            out.writeBytes(b);
            rest = dot < 0 ? "" : rest.substring(dot + 1);
        }
        out.write(0);
        return this;
    }

    DnsMessages u16(int v) {
        out.write(v >>> 8);
        out.write(v);
        return this;
    }

    DnsMessages u32(long v) {
        u16((int) (v >>> 16) & 0xffff);
        return u16((int) v & 0xffff);
    }

    private void patch16(int at, int v) {
        byte[] b = out.toByteArray();
        b[at] = (byte) (v >>> 8);
        b[at + 1] = (byte) v;
        out.reset();
        out.writeBytes(b);
    }

    private static byte[] parseV4(String address) {
        String[] p = address.split("\\.");
        byte[] b = new byte[4];
        for (int i = 0; i < 4; i++) {
            b[i] = (byte) Integer.parseInt(p[i]);
        }
        return b;
    }
}
