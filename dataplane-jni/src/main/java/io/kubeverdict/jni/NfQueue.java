package io.kubeverdict.jni;

/** One bound NFQUEUE: the kernel hands this socket the packets sent to queue {@code number}. */
public final class NfQueue implements AutoCloseable {
    /** NFQA_CFG_F_FAIL_OPEN: accept packets instead of dropping them when the queue is full. */
    public static final int FLAG_FAIL_OPEN = 1;
    /** NFQA_CFG_F_GSO: take unsegmented GSO packets (we only read headers). */
    public static final int FLAG_GSO = 4;
    /** Bytes of each packet copied to user space: enough for IPv6 + extension headers + L4 ports. */
    public static final int COPY_BYTES = 128;

    private final int number;
    private long queue;

    public NfQueue(int number, int flags) {
        NativeLibrary.ensureAvailable();
        if (number < 0 || number > 65535) {
            throw new IllegalArgumentException("queue number must be 0..65535, got " + number);
        }
        this.number = number;
        this.queue = NativeException.check("bind nfqueue " + number, NfqNative.open(number, COPY_BYTES, flags));
    }

    public int number() {
        return number;
    }

    public int fd() {
        return NfqNative.fd(handle());
    }

    long handle() {
        if (queue == 0) {
            throw new IllegalStateException("queue " + number + " is closed");
        }
        return queue;
    }

    @Override
    public void close() {
        if (queue != 0) {
            long q = queue;
            queue = 0;
            NativeException.check("unbind nfqueue " + number, NfqNative.close(q));
        }
    }
}
