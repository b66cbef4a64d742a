// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import com.google.protobuf.ByteString;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state a new stream may resume from (sync thread only): the snapshot last enforced. A stream's
 * request carries its digest ({@link SnapshotDigest}); a control plane whose current snapshot of
 * the node has that digest answers with a resumed InSync alone, and the stream's assembler then
 * starts from the enforced state instead of nothing. Any other first message starts from nothing
 * (the full snapshot), as before. Before any stream has enforced a state, the state the agent
 * loaded from its state file at start is offered (when {@link #loadedAtStart} gave one): a
 * restarted agent resumes too. A resume enforces the offered state again like any InSync, so what
 * is enforced after it is that state even where enforcing it at boot failed.
 */
final class ResumePoint {
    private static final Logger log = LoggerFactory.getLogger(ResumePoint.class);
    private Supplier<NodeSnapshot> loaded; // the state file's, until the first stream asks
    private NodeSnapshot enforced;
    private ByteString digest; // of enforced, made when a stream first asks for it
    private NodeSnapshot offered; // what the current stream's request offered, or null

    /** A state was enforced: later streams offer it (null: none, after a failed apply). */
    void enforced(NodeSnapshot snapshot) {
        enforced = snapshot;
        digest = null;
    }

    /**
     * Before the first stream: the state loaded from the state file, offered until a stream
     * enforces one of its own; null (or a failure) offers nothing. The first request asks for it,
     * on the sync thread, after the first dial.
     */
    void loadedAtStart(Supplier<NodeSnapshot> loaded) {
        this.loaded = loaded;
    }

    /** The request of a new stream: {@code base} with the enforced state's digest, when there is one. */
    SyncRequest request(SyncRequest base) {
        if (loaded != null) {
            Supplier<NodeSnapshot> first = loaded;
            loaded = null;
            enforced(fromStateFile(first));
        }
        offered = enforced;
        if (offered == null) {
            return base;
        }
        if (digest == null) {
            digest = SnapshotDigest.of(offered);
        }
        return base.toBuilder().setResumeDigest(digest).build();
    }

    private static NodeSnapshot fromStateFile(Supplier<NodeSnapshot> loaded) {
        try {
            return loaded.get();
        } catch (RuntimeException e) {
            log.warn(
                    "the state file's state could not be loaded to resume from: {}; a full snapshot follows",
                    e.toString());
            return null;
        }
    }

    /**
     * Called with each message of the stream before it is applied; on the stream's first, a resumed
     * InSync seeds {@code builder} with the offered state.
     *
     * @throws ResyncRequiredException for a resumed InSync that answers no offer or is not first
     */
    void beforeApply(ToAgent message, boolean first, SnapshotAssembler builder) throws ResyncRequiredException {
        if (!message.hasInSync() || !message.getInSync().getResumed()) {
            return;
        }
        if (!first || offered == null) {
            throw new ResyncRequiredException("a resumed InSync at sequence " + message.getSequence()
                    + (first ? " though no state was offered" : " after the stream's first message"));
        }
        builder.seed(offered);
    }
}
