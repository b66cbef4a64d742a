// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import java.util.function.Consumer;

/**
 * Whether this replica should get new agents: once the first full calculation is published, while
 * its source loads (a manifest directory that stopped loading keeps serving its last good state
 * on open streams, but new agents should go to a replica that follows the directory), and until
 * a thread it cannot run without dies. Tells {@code onChange} each time the answer changes.
 */
final class Readiness {
    private Consumer<Boolean> onChange;
    private boolean calculated;
    private String sourceProblem;
    private String fatal;
    private boolean last;

    Readiness(Consumer<Boolean> onChange) {
        this.onChange = onChange;
    }

    /** Tells nobody until {@link #tell}: the source may start loading before the server exists. */
    Readiness() {
        this(ready -> {});
    }

    /** From now on tells {@code onChange}, at once if already ready. */
    synchronized void tell(Consumer<Boolean> onChange) {
        this.onChange = onChange;
        if (last) {
            onChange.accept(true);
        }
    }

    synchronized void firstCalculationPublished() {
        calculated = true;
        update();
    }

    synchronized void sourceLoads() {
        sourceProblem = null;
        update();
    }

    synchronized void sourceFails(String why) {
        sourceProblem = why;
        update();
    }

    /** Why the source's latest load failed ("" while it loads). */
    synchronized String sourceProblem() {
        return sourceProblem == null ? "" : sourceProblem;
    }

    synchronized void fatal(String why) {
        fatal = why;
        update();
    }

    synchronized boolean ready() {
        return calculated && sourceProblem == null && fatal == null;
    }

    /** Why not ready ("" when ready). */
    synchronized String reason() {
        if (fatal != null) {
            return fatal;
        }
        if (sourceProblem != null) {
            return sourceProblem;
        }
        return calculated ? "" : "first calculation not done";
    }

    private void update() {
        boolean now = ready();
        if (now != last) {
            last = now;
            onChange.accept(now);
        }
    }
}
