// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

/** Puts the selected local pod addresses into the kernel's queue sets (one transaction). */
@FunctionalInterface
public interface SelectedSetsProgrammer {
    void program(SelectedAddresses selected) throws Exception;

    /**
     * A generation with the verdict cache on: the sets, and in the same transaction an empty cache
     * whose only tag is {@code cacheMark} (0: nothing may be added). Called for every generation,
     * changed addresses or not. If it throws, the implementation has tried to empty the cache and
     * take its tag away on its own.
     */
    default void program(SelectedAddresses selected, int cacheMark) throws Exception {
        program(selected);
    }
}
