// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** libnftables rejected a command; the message holds nft's own error text. */
public final class NftablesException extends NativeException {
    private final String nftError;

    public NftablesException(int errno, String nftError) {
        super("nftables", errno, nftError);
        this.nftError = nftError;
    }

    public String nftError() {
        return nftError;
    }
}
