// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.function.Consumer;

/** Where sources deliver cluster changes; the sink applies them on the calculator's own thread. */
public interface ClusterEventSink {
    /** A change to apply; {@code kind} names it for metrics, e.g. "pod/upsert". */
    void change(String kind, Consumer<PolicyCalculator> change);

    /**
     * A change to one object, named e.g. "pod/ns/name": a later change of the same object
     * supersedes this one, so a retry of this one (if it failed) is dropped then.
     */
    default void change(String kind, String object, Consumer<PolicyCalculator> change) {
        change(kind, change);
    }

    /** The source has delivered its complete initial state. */
    void sourceSynced(String source);

    /**
     * Everything delivered so far reflects this revision of the source (e.g. a manifest
     * directory's {@link ManifestRevision}); it is published once the
     * snapshots computed from those changes are.
     */
    void sourceRevision(String source, String revision);
}
