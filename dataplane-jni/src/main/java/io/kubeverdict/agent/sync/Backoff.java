// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import java.time.Duration;

/**
 * Reconnect backoff with full jitter: attempt n waits a uniformly random time in
 * [0, min(max, initial * multiplier^n)]. The cap is short (1 s by default) so that an agent
 * notices a returning control plane within about a second; the full jitter spreads a whole
 * fleet's reconnects over that second instead of bunching them (the server additionally admits
 * only a few full snapshots at a time). Pure: the caller supplies the random number.
 */
public record Backoff(Duration initial, Duration max, double multiplier) {

    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0);

    /**
     * After a dial that found no server: a refused connect is one SYN and its reset (for a Service
     * without endpoints, rejected on the node itself), so the agent dials again within 250 ms and
     * follows a restarted control plane closely; the jitter spreads a fleet over those 250 ms.
     */
    public static final Backoff UNREACHABLE = new Backoff(Duration.ofMillis(50), Duration.ofMillis(250), 2.0);

    public Backoff {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + ", " + max);
        }
        if (multiplier < 1.0) {
            throw new IllegalArgumentException("need multiplier >= 1, got " + multiplier);
        }
    }

    /** The upper end of the band attempt {@code attempt} (0 = first retry) draws from. */
    public Duration bound(int attempt) {
        double base = initial.toMillis() * Math.pow(multiplier, Math.max(0, attempt));
        return Duration.ofMillis(Math.round(Math.min(base, max.toMillis())));
    }

    /**
     * The delay before reconnect attempt {@code attempt}.
     * @param unitRandom a number in [0, 1) that picks the point inside [0, bound]
     */
    public Duration delay(int attempt, double unitRandom) {
        return Duration.ofMillis(Math.max(1, Math.round(bound(attempt).toMillis() * unitRandom)));
    }
}
