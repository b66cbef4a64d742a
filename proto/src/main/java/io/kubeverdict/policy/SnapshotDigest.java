// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The content digest of a node's snapshot, with which an agent that reconnects resumes instead of
 * receiving its whole state again (SyncRequest.resume_digest): SHA-256 over a canonical form in
 * which only order does not count — the pod ranges sorted, IP sets by id with their members
 * sorted, policies by (tier, name), endpoints by (namespace, pod), each message serialized
 * deterministically (map entries by key). That is the order the agent's assembler renders, so
 * equal digests mean the same state whichever side computed them; anything else that differs
 * (a member, a rule, an address as written) gives another digest, and the agent then gets the
 * full snapshot. Pure.
 */
public final class SnapshotDigest {
    private static final Comparator<ActivePolicy> POLICY_ORDER = Comparator.comparing(
                    (ActivePolicy p) -> p.getId().getTier())
            .thenComparing(p -> p.getId().getName());
    private static final Comparator<Endpoint> ENDPOINT_ORDER = Comparator.comparing(
                    (Endpoint e) -> e.getId().getNamespace())
            .thenComparing(e -> e.getId().getPod());

    private SnapshotDigest() {}

    public static ByteString of(NodeSnapshot snapshot) {
        MessageDigest sha = sha256();
        text(sha, snapshot.getNode());
        List<String> cidrs = new ArrayList<>(snapshot.getPodCidrsList());
        cidrs.sort(Comparator.naturalOrder());
        count(sha, cidrs.size());
        cidrs.forEach(c -> text(sha, c));

        List<IpSet> sets = new ArrayList<>(snapshot.getIpSetsList());
        sets.sort(Comparator.comparing(IpSet::getId));
        count(sha, sets.size());
        for (IpSet set : sets) {
            List<String> members = new ArrayList<>(set.getMembersList());
            members.sort(Comparator.naturalOrder());
            // The set as the assembler renders it: the members sorted, nothing else moved.
            message(sha, set.toBuilder().clearMembers().addAllMembers(members).build());
        }
        List<ActivePolicy> policies = new ArrayList<>(snapshot.getPoliciesList());
        policies.sort(POLICY_ORDER);
        count(sha, policies.size());
        policies.forEach(p -> message(sha, p));
        List<Endpoint> endpoints = new ArrayList<>(snapshot.getEndpointsList());
        endpoints.sort(ENDPOINT_ORDER);
        count(sha, endpoints.size());
        endpoints.forEach(e -> message(sha, e));
        return ByteString.copyFrom(sha.digest());
    }

    /** Whether {@code digest} (as an agent sent it) is the digest of {@code snapshot}; empty never is. */
    public static boolean matches(NodeSnapshot snapshot, ByteString digest) {
        return !digest.isEmpty() && MessageDigest.isEqual(of(snapshot).toByteArray(), digest.toByteArray());
    }

    // Every part with its length first, so no two different forms feed the same bytes.
    private static void text(MessageDigest sha, String s) {
        bytes(sha, s.getBytes(StandardCharsets.UTF_8));
    }

    private static void count(MessageDigest sha, int n) {
        sha.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
    }

    private static void bytes(MessageDigest sha, byte[] b) {
        count(sha, b.length);
        sha.update(b);
    }

    private static void message(MessageDigest sha, MessageLite m) {
        try {
            ByteArrayOutputStream buffer = new ByteArrayOutputStream(m.getSerializedSize());
            CodedOutputStream out = CodedOutputStream.newInstance(buffer);
            out.useDeterministicSerialization();
            m.writeTo(out);
            out.flush();
            bytes(sha, buffer.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
