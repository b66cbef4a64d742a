// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * libnftables as {@link Nftables} calls it: the shim's natives ({@link #NATIVE}), or a stand-in
 * with which tests hold a call inside while another thread closes the context.
 */
interface NftLibrary {
    long open();

    void close(long ctx);

    void setJson(long ctx, boolean json);

    int run(long ctx, String commands);

    String output(long ctx);

    String error(long ctx);

    NftLibrary NATIVE = new NftLibrary() {
        @Override
        public long open() {
            return NftNative.open();
        }

        @Override
        public void close(long ctx) {
            NftNative.close(ctx);
        }

        @Override
        public void setJson(long ctx, boolean json) {
            NftNative.setJson(ctx, json);
        }

        @Override
        public int run(long ctx, String commands) {
            return NftNative.run(ctx, commands);
        }

        @Override
        public String output(long ctx) {
            return NftNative.output(ctx);
        }

        @Override
        public String error(long ctx) {
            return NftNative.error(ctx);
        }
    };
}
