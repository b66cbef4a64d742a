// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.kubeverdict.proto.v1.ToAgent;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * What a Sync stream sends: this stream's sequence and event time, then a {@link Payload} that
 * other streams may share. On the wire it is exactly the ToAgent with those two fields set:
 * protobuf writes fields in number order, and sequence (1) and event time (2) come before every
 * payload field (10 and up), so the envelope's bytes followed by the payload's serialized-once
 * bytes are the bytes the generated marshaller would write. Agents cannot tell the difference.
 */
record StampedMessage(long sequence, long eventTimeUnixNanos, Payload payload) {

    /** The Sync method's response marshaller on the server. */
    static final MethodDescriptor.Marshaller<StampedMessage> MARSHALLER = new Marshaller();

    /** The same message as the generated class (tests, diagnostics). */
    ToAgent toProto() {
        return payload.message().toBuilder()
                .setSequence(sequence)
                .setEventTimeUnixNanos(eventTimeUnixNanos)
                .build();
    }

    /** Field 1 and field 2 as the generated code writes them (omitted when 0). */
    byte[] envelope() {
        int size = (sequence == 0 ? 0 : CodedOutputStream.computeUInt64Size(1, sequence))
                + (eventTimeUnixNanos == 0 ? 0 : CodedOutputStream.computeInt64Size(2, eventTimeUnixNanos));
        byte[] out = new byte[size];
        CodedOutputStream c = CodedOutputStream.newInstance(out);
        try {
            if (sequence != 0) {
                c.writeUInt64(1, sequence);
            }
            if (eventTimeUnixNanos != 0) {
                c.writeInt64(2, eventTimeUnixNanos);
            }
            c.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new IllegalStateException("envelope sized wrong", e); // an array of the computed size cannot overflow
        }
        return out;
    }

    private static final class Marshaller implements MethodDescriptor.Marshaller<StampedMessage> {
        @Override
        public InputStream stream(StampedMessage value) {
            return new Concatenated(value.envelope(), value.payload().encoded());
        }

        @Override
        public StampedMessage parse(InputStream stream) {
            try {
                ToAgent m = ToAgent.parseFrom(stream);
                return new StampedMessage(
                        m.getSequence(),
                        m.getEventTimeUnixNanos(),
                        new Payload(m.toBuilder()
                                .clearSequence()
                                .clearEventTimeUnixNanos()
                                .build()));
            } catch (InvalidProtocolBufferException e) {
                throw Status.INTERNAL
                        .withDescription("invalid ToAgent")
                        .withCause(e)
                        .asRuntimeException();
            } catch (IOException e) {
                throw Status.INTERNAL
                        .withDescription("reading ToAgent")
                        .withCause(e)
                        .asRuntimeException();
            }
        }
    }

    /**
     * Two byte arrays read as one stream; gRPC's framer asks its length ({@link KnownLength}) and
     * has it copied straight into its buffers ({@link Drainable}).
     */
    static final class Concatenated extends InputStream implements KnownLength, Drainable {
        private final byte[] first;
        private final byte[] second;
        private int pos; // over first then second

        Concatenated(byte[] first, byte[] second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public int available() {
            return first.length + second.length - pos;
        }

        @Override
        public int read() {
            if (pos < first.length) {
                return first[pos++] & 0xff;
            }
            if (pos < first.length + second.length) {
                return second[pos++ - first.length] & 0xff;
            }
            return -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            int left = available();
            if (left == 0) {
                return -1;
            }
            int n = Math.min(len, left);
            int done = 0;
            if (pos < first.length) {
                int k = Math.min(n, first.length - pos);
                System.arraycopy(first, pos, b, off, k);
                done = k;
            }
            if (done < n) {
                System.arraycopy(second, pos + done - first.length, b, off + done, n - done);
            }
            pos += n;
            return n;
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int n = available();
            if (pos < first.length) {
                target.write(first, pos, first.length - pos);
                target.write(second);
            } else {
                target.write(second, pos - first.length, n);
            }
            pos += n;
            return n;
        }
    }
}
