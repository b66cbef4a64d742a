package io.kubeverdict.jni;

/** Natives of kv_nfqueue.c; handles point to the shim's queue struct. */
final class NfqNative {
    private NfqNative() {}

    static native long open(int queueNum, int copyBytes, int flags);

    static native int close(long queue);

    static native int fd(long queue);
}
