package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.function.Consumer;

/** Where sources deliver cluster changes; the sink applies them on the calculator's own thread. */
public interface ClusterEventSink {
    /** A change to apply; {@code kind} names it for metrics, e.g. "pod/upsert". */
    void change(String kind, Consumer<PolicyCalculator> change);

    /** The source has delivered its complete initial state. */
    void sourceSynced(String source);
}
