// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

/** A message's sequence number is not the previous one plus one. */
public final class SequenceGapException extends ResyncRequiredException {

    private final long expected;
    private final long actual;

    public SequenceGapException(long expected, long actual) {
        super("sequence gap: expected " + expected + ", got " + actual);
        this.expected = expected;
        this.actual = actual;
    }

    public long expected() {
        return expected;
    }

    public long actual() {
        return actual;
    }
}
