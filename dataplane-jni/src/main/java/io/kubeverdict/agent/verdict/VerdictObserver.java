// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

/**
 * What the verdict loop reports, on its own thread, for metrics. Implementations must be cheap
 * and must not allocate per call (the agent wires these to micrometer counters and a timer).
 */
public interface VerdictObserver {
    /** {@code nanos} of a packet that was not timed. */
    long NOT_TIMED = -1;

    /**
     * A packet was parsed and judged.
     *
     * @param family 4 or 6
     * @param protocol IANA protocol number (the contract's Protocol enum values; others possible)
     * @param allowed the verdict sent
     * @param nanos time spent parsing and judging this packet, or {@link #NOT_TIMED}: the loop times
     *     one packet in {@link VerdictLoop#TIMING_SAMPLE} only (two clock reads per packet would be
     *     work nobody asked for); counts stay exact
     */
    void decided(int family, int protocol, boolean allowed, long nanos);

    /**
     * A packet could not be read and was dropped; {@code reason} is its
     * {@link io.kubeverdict.agent.packet.PacketParser} result code (never OK).
     */
    void unreadable(int reason);

    /** The judge threw; the packet got the default verdict. */
    void judgeFailed(RuntimeException error);

    /** Receiving or sending verdicts failed; the loop backs off briefly and continues. */
    void queueFailed(RuntimeException error);

    /** Observes nothing. */
    VerdictObserver NONE = new VerdictObserver() {
        @Override
        public void decided(int family, int protocol, boolean allowed, long nanos) {}

        @Override
        public void unreadable(int reason) {}

        @Override
        public void judgeFailed(RuntimeException error) {}

        @Override
        public void queueFailed(RuntimeException error) {}
    };
}
