// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

/** What the re-judging of established connections reports, for metrics. Called on its thread. */
public interface RejudgeObserver {
    /** A dump returned this many entries (the userspace work it caused). */
    void dumped(int entries);

    /** A connection was judged again. */
    void examined();

    /** A connection the policy now denies was cut, this long after the change that denied it. */
    void cut(int protocol, long nanosSinceChange);

    /** A connection went away between the dump and its cut (nothing left to cut). */
    void vanished();

    /** A dump failed (it is retried); errno as the kernel said. */
    void dumpFailed(int errno);

    /** Marking a connection failed (its endpoint is retried). */
    void cutFailed(int errno);

    /** Endpoints whose connections still wait to be judged (0 once a pass completed). */
    void pending(int endpoints);

    /** One pass over the pending endpoints ended, complete or with endpoints left for a retry. */
    void passFinished(long nanos, boolean complete);

    /**
     * Connections affected by a change applied at {@code nanos} (the re-judging's clock) are not
     * all judged yet, and none of an older one is left: pending, in a pass that runs, or to retry.
     */
    void behindSince(long nanos);

    /** Every change handed over so far is judged. */
    void caughtUp();

    RejudgeObserver NONE = new RejudgeObserver() {
        @Override
        public void dumped(int entries) {}

        @Override
        public void examined() {}

        @Override
        public void cut(int protocol, long nanosSinceChange) {}

        @Override
        public void vanished() {}

        @Override
        public void dumpFailed(int errno) {}

        @Override
        public void cutFailed(int errno) {}

        @Override
        public void pending(int endpoints) {}

        @Override
        public void passFinished(long nanos, boolean complete) {}

        @Override
        public void behindSince(long nanos) {}

        @Override
        public void caughtUp() {}
    };
}
