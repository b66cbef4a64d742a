// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** Natives of kv_nftables.c; handles are struct nft_ctx pointers. */
final class NftNative {
    private NftNative() {}

    static native long open();

    static native void close(long ctx);

    static native void setJson(long ctx, boolean json);

    static native int run(long ctx, String commands);

    static native String output(long ctx);

    static native String error(long ctx);
}
