// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import com.google.protobuf.InvalidProtocolBufferException;
import io.kubeverdict.proto.v1.PersistedNodeState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The state file's bytes: an 8-byte magic, a format version, the payload's length and its SHA-256,
 * then the payload ({@link PersistedNodeState}). Decoding checks all of them and then whether the
 * state may be enforced here and now; every refusal names its reason. Pure: no I/O, no clock.
 */
public final class StateFileFormat {
    static final byte[] MAGIC = "KVSTATE\n".getBytes(StandardCharsets.US_ASCII);
    /** Bumped when the layout or the payload's meaning changes incompatibly; other versions are not read. */
    public static final int VERSION = 1;

    static final int HEADER_BYTES = MAGIC.length + 4 + 8 + 32;
    /** A state written this far in the future (by the reading clock) is refused: that clock or the writer's jumped. */
    public static final long FUTURE_TOLERANCE_MILLIS = 5 * 60_000L;

    /** Why a file's state is not enforced. */
    public enum Refusal {
        MISSING("no state file"),
        UNREADABLE("the file cannot be read"),
        TOO_LARGE("the file is larger than the agent reads"),
        NOT_A_STATE_FILE("not a kube-verdict state file"),
        UNSUPPORTED_VERSION("written in a format version this agent does not read"),
        TRUNCATED("truncated"),
        CHECKSUM_MISMATCH("its checksum does not match its contents (corrupt)"),
        UNPARSABLE("its contents do not parse"),
        FOREIGN_NODE("written for another node"),
        TOO_OLD("older than the maximum age"),
        FROM_THE_FUTURE("written in the future by this node's clock");

        private final String text;

        Refusal(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    /** A decoded file: the state, or why there is none (with detail for the log). */
    public record Decoded(PersistedNodeState state, Refusal refusal, String detail) {
        static Decoded refused(Refusal refusal, String detail) {
            return new Decoded(null, refusal, detail);
        }

        public boolean usable() {
            return state != null;
        }
    }

    private StateFileFormat() {}

    public static byte[] encode(PersistedNodeState state) {
        byte[] payload = state.toByteArray();
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + payload.length);
        out.put(MAGIC)
                .putInt(VERSION)
                .putLong(payload.length)
                .put(sha256(payload))
                .put(payload);
        return out.array();
    }

    /**
     * @param node the reading agent's node
     * @param nowMillis the reading clock
     * @param maxAgeMillis states written longer ago than this are refused
     */
    public static Decoded decode(byte[] file, String node, long nowMillis, long maxAgeMillis) {
        if (file.length < MAGIC.length || !Arrays.equals(file, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return Decoded.refused(Refusal.NOT_A_STATE_FILE, "no magic");
        }
        if (file.length < HEADER_BYTES) {
            return Decoded.refused(Refusal.TRUNCATED, file.length + " bytes, shorter than the header");
        }
        ByteBuffer in = ByteBuffer.wrap(file);
        in.position(MAGIC.length);
        int version = in.getInt();
        if (version != VERSION) {
            return Decoded.refused(Refusal.UNSUPPORTED_VERSION, "version " + version + ", this agent reads " + VERSION);
        }
        long length = in.getLong();
        byte[] checksum = new byte[32];
        in.get(checksum);
        if (length != file.length - HEADER_BYTES) {
            return Decoded.refused(
                    length > file.length - HEADER_BYTES ? Refusal.TRUNCATED : Refusal.CHECKSUM_MISMATCH,
                    "header says " + length + " payload bytes, the file has " + (file.length - HEADER_BYTES));
        }
        byte[] payload = Arrays.copyOfRange(file, HEADER_BYTES, file.length);
        if (!MessageDigest.isEqual(checksum, sha256(payload))) {
            return Decoded.refused(Refusal.CHECKSUM_MISMATCH, "SHA-256 differs");
        }
        PersistedNodeState state;
        try {
            state = PersistedNodeState.parseFrom(payload);
        } catch (InvalidProtocolBufferException e) {
            return Decoded.refused(Refusal.UNPARSABLE, e.getMessage());
        }
        if (!state.getNode().equals(node) || !state.getSnapshot().getNode().equals(node)) {
            return Decoded.refused(Refusal.FOREIGN_NODE, "written for node \"" + state.getNode() + "\"");
        }
        long age = nowMillis - state.getWrittenUnixMillis();
        if (age < -FUTURE_TOLERANCE_MILLIS) {
            return Decoded.refused(Refusal.FROM_THE_FUTURE, "written " + (-age / 1000) + " s ahead of this clock");
        }
        if (age > maxAgeMillis) {
            return Decoded.refused(
                    Refusal.TOO_OLD,
                    "written " + (age / 1000) + " s ago, the maximum is " + (maxAgeMillis / 1000) + " s");
        }
        return new Decoded(state, null, null);
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
