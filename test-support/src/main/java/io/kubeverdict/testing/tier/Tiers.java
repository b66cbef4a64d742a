// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

/**
 * The test tiers, as JUnit tags. A test with none of these tags is a unit test: pure, no
 * sockets beyond loopback, no kernel state, no root (Maven profile {@code -Punit}).
 */
public final class Tiers {
    public static final String MOCK_API = "mockapi";
    public static final String KERNEL = "kernel";
    public static final String E2E = "e2e";
    /** Coverage-guided fuzzing slices (Jazzer), run by their own surefire executions. */
    public static final String FUZZ = "fuzz";

    private Tiers() {}
}
