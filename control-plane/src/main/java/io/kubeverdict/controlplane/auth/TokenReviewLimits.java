// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Status;
import java.util.concurrent.Semaphore;
import java.util.function.LongSupplier;

/**
 * What a token the control plane has not seen may cost before it is reviewed: a caller cannot be
 * told apart by anything but its address until the API server has answered, so each peer address
 * gets a small budget of TokenReviews (a token bucket), and at most {@code maxInFlight} reviews
 * wait for the API server at once, whoever asks. Tokens already reviewed (accepted or rejected,
 * {@link CachingTokenReviewer}) cost nothing and are not counted: an agent's token is reviewed once
 * per 30 s, and a fleet reconnecting comes from as many addresses as nodes. Loopback is limited too:
 * its callers (port-forward) normally send no token at all.
 *
 * @see BearerTokenInterceptor
 */
public final class TokenReviewLimits {
    /**
     * @param perAddressPerSecond reviews of unknown tokens per peer address and second
     * @param perAddressBurst reviews an address may ask for at once after being quiet
     * @param maxInFlight reviews waiting for the API server at once, over all addresses
     * @param maxTrackedAddresses budgets kept (beyond them, new addresses share one)
     */
    public record Config(double perAddressPerSecond, int perAddressBurst, int maxInFlight, int maxTrackedAddresses) {
        public static Config defaults() {
            return new Config(5, 10, 8, 10_000);
        }
    }

    /** Why a review may not start: the reason label of the refusal counter and the caller's text. */
    public record Refusal(String reason, Status.Code code, String why) {}

    private final Config config;
    private final CallerBuckets perAddress;
    private final Semaphore inFlight;

    public TokenReviewLimits(Config config, LongSupplier nanoClock) {
        if (config.maxInFlight() < 1) {
            throw new IllegalArgumentException("token reviews need at least one in flight: " + config);
        }
        this.config = config;
        this.perAddress = new CallerBuckets(
                config.perAddressPerSecond(), config.perAddressBurst(), config.maxTrackedAddresses(), nanoClock);
        this.inFlight = new Semaphore(config.maxInFlight());
    }

    /**
     * Null when a review for a caller at {@code address} may start now; the caller must then call
     * {@link #finished()} when it has its answer. Otherwise why not.
     */
    public Refusal tryStart(String address) {
        if (!perAddress.tryTake(address)) {
            return new Refusal(
                    "token_reviews_per_address",
                    Status.Code.RESOURCE_EXHAUSTED,
                    "more than " + config.perAddressPerSecond() + " unknown tokens per second (burst "
                            + config.perAddressBurst() + ") from one address");
        }
        if (!inFlight.tryAcquire()) {
            // UNAVAILABLE: as when the API server cannot be reached; agents retry with backoff.
            return new Refusal(
                    "token_reviews_in_flight",
                    Status.Code.UNAVAILABLE,
                    config.maxInFlight() + " token reviews are already waiting for the API server");
        }
        return null;
    }

    /** A review {@link #tryStart} allowed has ended. */
    public void finished() {
        inFlight.release();
    }
}
