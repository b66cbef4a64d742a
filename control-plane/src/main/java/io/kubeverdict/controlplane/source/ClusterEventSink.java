package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.function.Consumer;

/** Where sources deliver cluster changes; the sink applies them on the calculator's own thread. */
public interface ClusterEventSink {
    /** A change to apply; {@code kind} names it for metrics, e.g. "pod/upsert". */
    void change(String kind, Consumer<PolicyCalculator> change);

    /** The source has delivered its complete initial state. */
    void sourceSynced(String source);

    /**
     * Everything delivered so far reflects this revision of the source (e.g. a manifest
     * directory's {@link ManifestRevision}); it is published once the
     * snapshots computed from those changes are.
     */
    void sourceRevision(String source, String revision);
}
