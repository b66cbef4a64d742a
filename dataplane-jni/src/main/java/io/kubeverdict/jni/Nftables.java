// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * A libnftables context. Each {@link #run} is one netlink transaction: the whole text applies or
 * nothing does. Not thread-safe; one owner at a time. The netlink socket lives in the network
 * namespace of the thread that runs commands.
 */
public final class Nftables implements AutoCloseable {
    private long ctx;

    public Nftables() {
        NativeLibrary.ensureAvailable();
        ctx = NativeException.check("nft_ctx_new", NftNative.open());
    }

    /** Applies commands atomically and returns what nft printed (listings). */
    public String run(String commands) {
        int rc = NftNative.run(handle(), commands);
        if (rc < 0) {
            throw new NftablesException(-rc, NftNative.error(ctx));
        }
        return NftNative.output(ctx);
    }

    /** Like {@link #run} with JSON output, for listings parsed by tests and tools. */
    public String runJson(String commands) {
        NftNative.setJson(handle(), true);
        try {
            return run(commands);
        } finally {
            NftNative.setJson(ctx, false);
        }
    }

    private long handle() {
        if (ctx == 0) {
            throw new IllegalStateException("nftables context is closed");
        }
        return ctx;
    }

    @Override
    public void close() {
        if (ctx != 0) {
            NftNative.close(ctx);
            ctx = 0;
        }
    }
}
