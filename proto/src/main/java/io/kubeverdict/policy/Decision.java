package io.kubeverdict.policy;

/** The int codes {@link SnapshotIndex#decide} returns. */
public final class Decision {
    private Decision() {}

    public static boolean allowed(int code) {
        return (code & 1) != 0;
    }
}
