// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StampedMessageTest {
    private static final MethodDescriptor.Marshaller<ToAgent> PLAIN =
            ProtoUtils.marshaller(ToAgent.getDefaultInstance());
    private static final long[] ENVELOPE_VALUES = {0, 1, 127, 128, 300, 1L << 35, Long.MAX_VALUE, -1, Long.MIN_VALUE};

    /** Every kind of payload the diff produces, from random transitions, plus InSync. */
    private static List<Payload> payloads() {
        Random rnd = new Random(3);
        SnapshotDiff diff = new SnapshotDiff(1 << 20);
        List<Payload> out = new ArrayList<>();
        NodeSnapshot prev = IndexedSnapshot.empty("n1").snapshot();
        for (int i = 0; i < 60; i++) {
            NodeSnapshot next = SnapshotDiffTest.random(rnd);
            out.addAll(diff.diff(IndexedSnapshot.of(prev, i, 0), IndexedSnapshot.of(next, i + 1, 0)));
            prev = next;
        }
        // The node's ranges, and their removal: a NodeUpdate without fields is an empty payload.
        NodeSnapshot ranged = prev.toBuilder()
                .addPodCidrs("10.244.1.0/24")
                .addPodCidrs("fd00:1::/64")
                .build();
        out.addAll(diff.diff(IndexedSnapshot.of(prev, 60, 0), IndexedSnapshot.of(ranged, 61, 0)));
        out.addAll(diff.diff(IndexedSnapshot.of(ranged, 61, 0), IndexedSnapshot.of(prev, 62, 0)));
        out.add(Payload.IN_SYNC);
        return out;
    }

    @Test
    void wireBytesEqualThePlainMarshallersForEveryPayloadAndEnvelope() throws Exception {
        List<Payload> payloads = payloads();
        assertThat(payloads.stream().map(p -> p.message().getPayloadCase()).distinct())
                .hasSize(ToAgent.PayloadCase.values().length - 1);
        for (Payload p : payloads) {
            for (long seq : ENVELOPE_VALUES) {
                for (long time : ENVELOPE_VALUES) {
                    StampedMessage m = new StampedMessage(seq, time, p);
                    byte[] plain = PLAIN.stream(m.toProto()).readAllBytes();
                    InputStream stream = StampedMessage.MARSHALLER.stream(m);
                    assertThat(((KnownLength) stream).available()).isEqualTo(plain.length);
                    ByteArrayOutputStream drained = new ByteArrayOutputStream();
                    assertThat(((Drainable) stream).drainTo(drained)).isEqualTo(plain.length);
                    assertThat(drained.toByteArray())
                            .as("%s seq %d time %d", p, seq, time)
                            .isEqualTo(plain);
                    assertThat(StampedMessage.MARSHALLER
                                    .parse(StampedMessage.MARSHALLER.stream(m))
                                    .toProto())
                            .isEqualTo(m.toProto());
                }
            }
        }
    }

    @Test
    void everyWayOfReadingGivesTheSameBytes() throws Exception {
        Random rnd = new Random(5);
        for (Payload p : payloads()) {
            StampedMessage m = new StampedMessage(rnd.nextLong(), rnd.nextLong(), p);
            byte[] plain = m.toProto().toByteArray();

            InputStream single = StampedMessage.MARSHALLER.stream(m);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (int b; (b = single.read()) != -1; ) {
                bytes.write(b);
            }
            assertThat(bytes.toByteArray()).isEqualTo(plain);

            // Odd-sized reads that straddle the envelope/payload border, then a drain of the rest.
            InputStream chunked = StampedMessage.MARSHALLER.stream(m);
            ByteArrayOutputStream mixed = new ByteArrayOutputStream();
            byte[] buf = new byte[3];
            int n = chunked.read(buf, 0, 3);
            mixed.write(buf, 0, n);
            n = chunked.read(buf, 1, 2);
            mixed.write(buf, 1, n);
            ((Drainable) chunked).drainTo(mixed);
            assertThat(chunked.read()).isEqualTo(-1);
            assertThat(chunked.read(buf, 0, 3)).isEqualTo(-1);
            assertThat(mixed.toByteArray()).isEqualTo(plain);
        }
    }

    @Test
    void aPayloadIsSerializedOnceAndCarriesNoEnvelope() {
        Payload p = payloads().get(0);
        assertThat(p.encoded()).isSameAs(p.encoded());
        assertThatThrownBy(
                        () -> new Payload(p.message().toBuilder().setSequence(1).build()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Payload(
                        p.message().toBuilder().setEventTimeUnixNanos(1).build()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
