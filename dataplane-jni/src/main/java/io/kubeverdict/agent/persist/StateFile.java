// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import io.kubeverdict.proto.v1.PersistedNodeState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * One node's state file in the state directory ({@code <node>.state}). Writes are atomic and
 * durable: a temporary file beside it, flushed, renamed over it, the directory flushed. So a crash
 * or power loss leaves the old file or the new one, never a mixture; what a crash between the
 * steps does leave (a temporary file) is replaced by the next write.
 */
public final class StateFile {
    /** Larger files are refused unread: far above a 150k-pod node's state, well below the heap. */
    public static final long MAX_BYTES = 256L << 20;

    private final Path path;
    private final Path temporary;

    public StateFile(Path directory, String node) {
        String name = node.replaceAll("[^A-Za-z0-9._-]", "_");
        this.path = directory.resolve(name + ".state");
        this.temporary = directory.resolve(name + ".state.tmp");
    }

    public Path path() {
        return path;
    }

    /** The file's state if it may be enforced now, else why not. Never throws for what is on disk. */
    public StateFileFormat.Decoded read(String node, long nowMillis, long maxAgeMillis) {
        byte[] bytes;
        try {
            long size = Files.size(path);
            if (size > MAX_BYTES) {
                return new StateFileFormat.Decoded(null, StateFileFormat.Refusal.TOO_LARGE, size + " bytes");
            }
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return new StateFileFormat.Decoded(null, StateFileFormat.Refusal.MISSING, null);
        } catch (IOException | SecurityException e) {
            return new StateFileFormat.Decoded(null, StateFileFormat.Refusal.UNREADABLE, e.toString());
        }
        return StateFileFormat.decode(bytes, node, nowMillis, maxAgeMillis);
    }

    /** Replaces the file with this state; on failure the previous file is left as it was. */
    public void write(PersistedNodeState state) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(StateFileFormat.encode(state));
        Files.createDirectories(path.getParent());
        try {
            try (FileChannel out = FileChannel.open(
                    temporary,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true);
            }
            Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException alsoFailed) {
                e.addSuppressed(alsoFailed); // a read-only disk: the next write truncates it
            }
            throw e;
        }
        // The rename is durable once the directory is: without this a power loss may undo it.
        try (FileChannel directory = FileChannel.open(path.getParent(), StandardOpenOption.READ)) {
            directory.force(true);
        }
    }
}
