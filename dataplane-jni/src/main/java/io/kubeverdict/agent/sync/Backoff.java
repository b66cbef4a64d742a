package io.kubeverdict.agent.sync;

import java.time.Duration;

/**
 * Exponential reconnect backoff with jitter: attempt n waits about initial * multiplier^n, capped
 * at max, spread by +/- jitter so that a restarted control plane is not hit by every node at once.
 * Pure: the caller supplies the random number.
 */
public record Backoff(Duration initial, Duration max, double multiplier, double jitter) {

    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(30), 2.0, 0.2);

    public Backoff {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + ", " + max);
        }
        if (multiplier < 1.0 || jitter < 0.0 || jitter >= 1.0) {
            throw new IllegalArgumentException("need multiplier >= 1 and 0 <= jitter < 1");
        }
    }

    /**
     * The delay before reconnect attempt {@code attempt} (0 = first retry).
     * @param unitRandom a number in [0, 1) that picks the point inside the jitter band
     */
    public Duration delay(int attempt, double unitRandom) {
        double base = initial.toMillis() * Math.pow(multiplier, Math.max(0, attempt));
        double capped = Math.min(base, max.toMillis());
        double spread = capped * (1.0 - jitter + 2.0 * jitter * unitRandom);
        return Duration.ofMillis(Math.max(1, Math.round(spread)));
    }
}
