// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

/**
 * Told after a generation is fully enforced (index swapped, kernel sets changed), on the sync
 * thread; must not block.
 */
@FunctionalInterface
public interface GenerationListener {
    /** @param before the generation enforced until now, null for the first */
    void enforced(EnforcedState before, EnforcedState now);

    GenerationListener NONE = (before, now) -> {};
}
