// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import com.google.protobuf.InvalidProtocolBufferException;
import io.kubeverdict.proto.v1.FlowHistoryState;
import io.kubeverdict.proto.v1.FlowRecord;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The flow history on a volume, so a restarted control plane keeps what it had seen: a
 * {@link FlowHistoryState} message, written whole to a temporary file and moved over the last
 * one. A file that cannot be read (corrupt, another format, a record that is no record) is
 * ignored as a whole, with a log naming it: the history starts empty and the next write replaces it.
 */
public final class FlowHistoryFile {
    private static final Logger log = LoggerFactory.getLogger(FlowHistoryFile.class);
    static final int FORMAT = 1;
    /** Larger than any history the caps allow; a bigger file is not read into memory. */
    static final long MAX_BYTES = 1L << 30;

    private final Path path;

    public FlowHistoryFile(Path path) {
        this.path = path;
    }

    public Path path() {
        return path;
    }

    /** The records of the file; empty when there is none or it cannot be used (logged). */
    public List<FlowHistory.Held> read() {
        byte[] bytes;
        try {
            if (Files.size(path) > MAX_BYTES) {
                log.warn(
                        "flow history file {} is larger than {} bytes: ignored, the history starts empty",
                        path,
                        MAX_BYTES);
                return List.of();
            }
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            log.warn("flow history file {} cannot be read ({}): ignored, the history starts empty", path, e.toString());
            return List.of();
        }
        try {
            FlowHistoryState state = FlowHistoryState.parseFrom(bytes);
            if (state.getFormat() != FORMAT) {
                throw new IllegalArgumentException("format " + state.getFormat() + ", not " + FORMAT);
            }
            return state.getRecordsList().stream().map(FlowProtos::fromProto).toList();
        } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
            log.warn("flow history file {} is corrupt ({}): ignored, the history starts empty", path, e.getMessage());
            return List.of();
        }
    }

    /** Replaces the file with these records (atomically where the file system can). */
    public void write(List<FlowHistory.Held> records) throws IOException {
        FlowHistoryState.Builder state = FlowHistoryState.newBuilder().setFormat(FORMAT);
        for (FlowHistory.Held h : records) {
            FlowRecord r = FlowProtos.toProto(h, true);
            state.addRecords(r);
        }
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, path.getFileName().toString(), ".tmp");
        try {
            try (OutputStream out = Files.newOutputStream(tmp)) {
                state.build().writeTo(out);
            }
            try {
                Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
