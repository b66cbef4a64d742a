// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JNI shim as the agent jar ships it (the class path resource the native module packs),
 * copied to a file and read with binutils' readelf, so deploy tests check the real binary.
 */
final class ShippedShim {
    static final String RESOURCE = "/META-INF/native/libkubeverdict.so";
    private static final Pattern NEEDED = Pattern.compile("\\(NEEDED\\)\\s+Shared library: \\[([^]]+)]");

    final Path file;

    private ShippedShim(Path file) {
        this.file = file;
    }

    /** Copies the resource into dir. */
    static ShippedShim extractTo(Path dir) throws IOException {
        try (InputStream in = ShippedShim.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the test class path (build the native module)");
            }
            Path file = dir.resolve("libkubeverdict.so");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return new ShippedShim(file);
        }
    }

    static boolean readelfAvailable() {
        try {
            return run("readelf", "--version").exitCode == 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** readelf's output; fails the test when readelf fails. */
    String readelf(String... options) throws IOException {
        List<String> command = new ArrayList<>(List.of("readelf", "-W"));
        command.addAll(List.of(options));
        command.add(file.toString());
        Result r = run(command.toArray(String[]::new));
        if (r.exitCode != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.exitCode + ": " + r.output);
        }
        return r.output;
    }

    /** The sonames of the dynamic section's NEEDED entries, in order. */
    List<String> needed() throws IOException {
        List<String> sonames = new ArrayList<>();
        Matcher m = NEEDED.matcher(readelf("-d"));
        while (m.find()) {
            sonames.add(m.group(1));
        }
        return sonames;
    }

    /** Dynamic symbols the library defines and others can bind to (global or weak, default or protected visibility). */
    Set<String> exportedSymbols() throws IOException {
        Set<String> names = new TreeSet<>();
        for (String[] s : dynamicSymbols()) {
            if (!s[6].equals("UND")
                    && !s[6].equals("ABS")
                    && (s[4].equals("GLOBAL") || s[4].equals("WEAK"))
                    && (s[5].equals("DEFAULT") || s[5].equals("PROTECTED"))) {
                names.add(s[7]);
            }
        }
        return names;
    }

    /** Dynamic symbols the library takes from others. */
    Set<String> importedSymbols() throws IOException {
        Set<String> names = new TreeSet<>();
        for (String[] s : dynamicSymbols()) {
            if (s[6].equals("UND") && !s[7].isEmpty()) {
                names.add(s[7]);
            }
        }
        return names;
    }

    /** Rows of {@code readelf --dyn-syms}: Num, Value, Size, Type, Bind, Vis, Ndx, Name (without @version). */
    private List<String[]> dynamicSymbols() throws IOException {
        List<String[]> rows = new ArrayList<>();
        for (String line : readelf("--dyn-syms").split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 7 && f[0].matches("\\d+:")) {
                String name = f.length >= 8 ? f[7].replaceFirst("@.*", "") : "";
                rows.add(new String[] {f[0], f[1], f[2], f[3], f[4], f[5], f[6], name});
            }
        }
        return rows;
    }

    record Result(int exitCode, String output) {}

    static Result run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish");
            }
            return new Result(p.exitValue(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted running " + String.join(" ", command), e);
        }
    }
}
