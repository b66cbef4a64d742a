// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads the JNI shim that the native module packs into the jar, once per JVM, in the manner of
 * Netty's native transports: callers ask {@link #isAvailable()} or call {@link #ensureAvailable()},
 * and a failed load keeps its cause for a clear message instead of an UnsatisfiedLinkError later.
 * A library whose batch layout differs from this jar's ({@link NfqLayout}) counts as not loaded.
 */
public final class NativeLibrary {
    static final String RESOURCE = "/META-INF/native/libkubeverdict.so";

    private static final Throwable UNAVAILABILITY_CAUSE = load();

    private NativeLibrary() {}

    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** Why the shim could not be loaded, or null when it is loaded. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    public static void ensureAvailable() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new UnsatisfiedLinkError("kube-verdict native shim unavailable: " + UNAVAILABILITY_CAUSE);
        }
    }

    private static Throwable load() {
        try {
            if (!System.getProperty("os.name", "").toLowerCase().startsWith("linux")) {
                return new UnsupportedOperationException(
                        "only Linux is supported, not " + System.getProperty("os.name"));
            }
            System.load(extract().toString());
            NfqLayout.verifyLoaded();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** Copies the library out of the jar: dlopen needs a file. The copy is deleted at exit. */
    private static Path extract() throws IOException {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("resource " + RESOURCE + " is not on the class path");
            }
            Path file = Files.createTempFile("libkubeverdict", ".so");
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        }
    }
}
