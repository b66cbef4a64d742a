// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

/** Puts the selected local pod addresses into the kernel's queue sets (one transaction). */
@FunctionalInterface
public interface SelectedSetsProgrammer {
    void program(SelectedAddresses selected) throws Exception;

    /**
     * The table's first write with the verdict cache on: the sets and an empty cache whose only tag
     * is {@code cacheMark} (0: nothing may be added). Later generations change the cache before the
     * swap ({@link #closeCache}, {@link #resetCache}) and the sets with {@link #program(SelectedAddresses)}.
     */
    default void program(SelectedAddresses selected, int cacheMark) throws Exception {
        program(selected);
    }

    /**
     * Verdict cache, first step of a generation change: from this transaction's commit on no
     * packet adds a key (the tag sets emptied); the cached keys still answer, under the state that
     * is still current. A no-op without a cache or before the table is written.
     */
    default void closeCache() throws Exception {}

    /**
     * Verdict cache, second step (after every verdict sent before {@link #closeCache} reached the
     * kernel, before the new state decides anything): empties the cache and makes {@code cacheMark}
     * its only tag (0: none), in one transaction. If it throws, the implementation has tried to
     * empty the cache and leave it without a tag on its own.
     */
    default void resetCache(int cacheMark) throws Exception {}
}
