// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The project version this code was built as: read from {@code version.properties}, which Maven
 * fills in at build time, so it is the same in the shaded jars, in the reactor's class directories
 * and in tests (a jar manifest exists only in a jar).
 */
public final class BuildVersion {
    private static final String VERSION = read();

    private BuildVersion() {}

    /** For example {@code 0.1.0-SNAPSHOT}. */
    public static String current() {
        return VERSION;
    }

    private static String read() {
        try (InputStream in = BuildVersion.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties missing next to " + BuildVersion.class.getName());
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "");
            if (v.isBlank() || v.startsWith("${")) {
                throw new IllegalStateException("version.properties was not filtered by the build: version=" + v);
            }
            return v.strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
