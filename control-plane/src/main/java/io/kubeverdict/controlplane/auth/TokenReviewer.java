// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

/** Asks the cluster who a bearer token belongs to (the TokenReview API). */
@FunctionalInterface
public interface TokenReviewer {
    /**
     * The review of {@code token} for this process's audience. Never throws for a token that is
     * merely bad; an API failure is a {@link Review#failed} review (fail closed), not cached long.
     */
    Review review(String token);
}
