// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import java.util.List;

/**
 * Where the flow recorder hands the records of ended buckets (e.g. an OTLP export). Called on the
 * recorder's own thread: it must not block; what it cannot take it drops and counts.
 */
public interface FlowSink extends AutoCloseable {
    /** Records with the counts added since they were last handed out (see {@link FlowHistory#unexported}). */
    void accept(List<FlowHistory.Held> records);

    /** Sends what it still holds, within a bound, and stops. */
    @Override
    void close();
}
