// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.persist.StateFileFormat.Decoded;
import io.kubeverdict.agent.persist.StateFileFormat.Refusal;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.proto.v1.PersistedNodeState;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StateFileFormatTest {
    private static final long NOW = 1_800_000_000_000L;
    private static final long DAY = 24 * 3600_000L;

    private PersistedNodeState state;
    private byte[] file;

    @BeforeEach
    void encode() throws Exception {
        state = PersistedNodeState.newBuilder()
                .setNode("node-1")
                .setSequence(42)
                .setWrittenUnixMillis(NOW - 60_000)
                .setAgentVersion("test")
                .setSnapshot(SnapshotFixtures.allowFromB())
                .build();
        file = StateFileFormat.encode(state);
    }

    private static Decoded decode(byte[] bytes) {
        return StateFileFormat.decode(bytes, "node-1", NOW, DAY);
    }

    @Test
    void anIntactFileOfThisNodeDecodesToWhatWasWritten() {
        Decoded decoded = decode(file);
        assertThat(decoded.usable()).isTrue();
        assertThat(decoded.state()).isEqualTo(state);
    }

    @Test
    void everyTruncationIsRefusedWithoutThrowing() {
        for (int length = 0; length < file.length; length++) {
            Decoded decoded = decode(Arrays.copyOf(file, length));
            assertThat(decoded.usable())
                    .as("%d of %d bytes", length, file.length)
                    .isFalse();
            assertThat(decoded.refusal()).isIn(Refusal.NOT_A_STATE_FILE, Refusal.TRUNCATED);
        }
    }

    @Test
    void everyFlippedBitIsRefused() {
        for (int bit = 0; bit < file.length * 8; bit++) {
            byte[] damaged = file.clone();
            damaged[bit / 8] ^= (byte) (1 << (bit % 8));
            assertThat(decode(damaged).usable()).as("bit %d flipped", bit).isFalse();
        }
    }

    @Test
    void aPayloadThatIsNotTheStateButMatchesItsChecksumIsRefused() {
        byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff};
        byte[] forged = ByteBuffer.allocate(StateFileFormat.HEADER_BYTES + garbage.length)
                .put(file, 0, 12)
                .putLong(garbage.length)
                .put(sha256(garbage))
                .put(garbage)
                .array();
        assertThat(decode(forged).refusal()).isEqualTo(Refusal.UNPARSABLE);
    }

    @Test
    void anotherNodesFileIsRefused() {
        assertThat(StateFileFormat.decode(file, "node-2", NOW, DAY).refusal()).isEqualTo(Refusal.FOREIGN_NODE);
        // The snapshot inside must be this node's too, not only the label on it.
        byte[] relabelled = StateFileFormat.encode(state.toBuilder()
                .setSnapshot(state.getSnapshot().toBuilder().setNode("node-2"))
                .build());
        assertThat(decode(relabelled).refusal()).isEqualTo(Refusal.FOREIGN_NODE);
    }

    @Test
    void aStateOlderThanTheMaximumOrFromTheFutureIsRefused() {
        assertThat(StateFileFormat.decode(file, "node-1", NOW + DAY, DAY).refusal())
                .isEqualTo(Refusal.TOO_OLD);
        assertThat(StateFileFormat.decode(file, "node-1", NOW - 10 * 60_000, DAY)
                        .refusal())
                .as("the reading clock jumped back 10 minutes")
                .isEqualTo(Refusal.FROM_THE_FUTURE);
        assertThat(StateFileFormat.decode(file, "node-1", NOW - 61_000, DAY).usable())
                .as("within the clocks' tolerance")
                .isTrue();
    }

    @Test
    void anotherFormatVersionOrNoMagicIsRefused() {
        byte[] other = file.clone();
        ByteBuffer.wrap(other).putInt(StateFileFormat.MAGIC.length, StateFileFormat.VERSION + 1);
        assertThat(decode(other).refusal()).isEqualTo(Refusal.UNSUPPORTED_VERSION);
        assertThat(decode("apiVersion: v1\nkind: Pod\n".getBytes()).refusal()).isEqualTo(Refusal.NOT_A_STATE_FILE);
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
