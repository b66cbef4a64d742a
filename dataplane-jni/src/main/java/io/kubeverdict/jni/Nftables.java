// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * A libnftables context. Each {@link #run} is one netlink transaction: the whole text applies or
 * nothing does. libnftables is not thread-safe, so runs are serialized; {@link #close} never
 * frees the context while a run is inside it (it waits a bounded time, then leaves the free to
 * that run, {@link NativeHandle}). The netlink socket lives in the network namespace of the
 * thread that runs commands.
 */
public final class Nftables implements AutoCloseable {
    private final NftLibrary nft;
    private final NativeHandle ctx;
    private final Object oneAtATime = new Object();

    public Nftables() {
        this(loaded());
    }

    /** A context of this library (tests: a stand-in). */
    Nftables(NftLibrary nft) {
        this.nft = nft;
        long handle = NativeException.check("nft_ctx_new", nft.open());
        this.ctx = new NativeHandle("nftables context", handle, c -> {
            nft.close(c);
            return 0;
        });
    }

    private static NftLibrary loaded() {
        NativeLibrary.ensureAvailable();
        return NftLibrary.NATIVE;
    }

    /** Applies commands atomically and returns what nft printed (listings). */
    public String run(String commands) {
        return run(commands, false);
    }

    /** Like {@link #run} with JSON output, for listings parsed by tests and tools. */
    public String runJson(String commands) {
        return run(commands, true);
    }

    private String run(String commands, boolean json) {
        long c = ctx.acquire();
        try {
            synchronized (oneAtATime) {
                if (json) {
                    nft.setJson(c, true);
                }
                try {
                    int rc = nft.run(c, commands);
                    if (rc < 0) {
                        throw new NftablesException(-rc, nft.error(c));
                    }
                    return nft.output(c);
                } finally {
                    if (json) {
                        nft.setJson(c, false);
                    }
                }
            }
        } finally {
            ctx.release();
        }
    }

    /**
     * Frees the context once no run is inside it: at once, or after a run under way returns
     * (waiting up to {@link NativeHandle#CLOSE_WAIT_MILLIS}; a run that takes longer frees it
     * itself as it ends). Later runs are refused.
     */
    @Override
    public void close() {
        ctx.close(NativeHandle.CLOSE_WAIT_MILLIS);
    }
}
