// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent image has what the shim needs: its runtime stage installs the package of every
 * shared library the built .so needs (readelf NEEDED), its build stage the -dev package of every
 * library native/pom.xml links with -l. Package names come from dpkg on a Debian machine, else
 * from Debian's naming rule, which the eclipse-temurin (Ubuntu) images share.
 */
class AgentImagePackagesTest {
    private static final Path ROOT = repositoryRoot();
    private static final String DOCKERFILE = "deploy/docker/agent.Dockerfile";
    /** glibc's own libraries and the loader: every base image has them (libc6). */
    private static final Pattern BASE_IMAGE = Pattern.compile(
            "(libc|libpthread|libdl|libm|librt|libresolv|libutil)\\.so\\.\\d+|ld-linux.*\\.so\\.\\d+|libgcc_s\\.so\\.1");

    @TempDir
    Path dir;

    @Test
    void runtimeStageInstallsThePackageOfEveryLibraryTheShimNeeds() throws IOException {
        assumeTrue(
                ShippedShim.readelfAvailable(),
                "readelf (binutils) is not installed: cannot read the .so's NEEDED entries");
        List<String> needed = ShippedShim.extractTo(dir).needed().stream()
                .filter(soname -> !BASE_IMAGE.matcher(soname).matches())
                .toList();
        assertThat(needed).as("the shim links netfilter libraries").isNotEmpty();
        Set<String> runtime = aptInstalled(runtimeStage());
        for (String soname : needed) {
            String pkg = packageOwning(soname, runtimePackage(soname));
            assertThat(runtime)
                    .as(DOCKERFILE + " runtime stage installs " + pkg + " for " + soname)
                    .contains(pkg);
        }
    }

    @Test
    void buildStageInstallsTheDevPackageOfEveryLinkedLibrary() throws IOException {
        List<String> libraries = linkedLibraries();
        assertThat(libraries).as("-l flags in native/pom.xml").isNotEmpty();
        Set<String> build = aptInstalled(buildStage());
        assertThat(build).as("a C compiler and libc headers").contains("gcc", "libc6-dev");
        for (String library : libraries) {
            String pkg = packageOwning("lib" + library + ".so", devPackage(library));
            assertThat(build)
                    .as(DOCKERFILE + " build stage installs " + pkg + " for -l" + library)
                    .contains(pkg);
        }
    }

    @Test
    void namingRuleGivesDebiansPackageNames() {
        assertThat(runtimePackage("libnftnl.so.11")).isEqualTo("libnftnl11");
        assertThat(runtimePackage("libnetfilter_queue.so.1")).isEqualTo("libnetfilter-queue1");
        assertThat(runtimePackage("libmnl.so.0")).isEqualTo("libmnl0");
        assertThat(runtimePackage("libnftables.so.1")).isEqualTo("libnftables1");
        assertThat(runtimePackage("libjansson.so.4")).isEqualTo("libjansson4");
        assertThat(runtimePackage("libxtables.so.12")).isEqualTo("libxtables12");
        assertThat(runtimePackage("libgmp10.so.3"))
                .as("a digit before the version gets a dash")
                .isEqualTo("libgmp10-3");
        assertThat(devPackage("netfilter_queue")).isEqualTo("libnetfilter-queue-dev");
    }

    /** Where dpkg knows the files, the rule (used where it does not) must name the same packages. */
    @Test
    void namingRuleAgreesWithDpkgForTheShimsLibraries() throws IOException {
        assumeTrue(
                dpkgOwner("libc.so.6") != null,
                "dpkg is not available or does not own libc.so.6: not a Debian machine");
        Map<String, String> checked = new LinkedHashMap<>();
        for (String library : linkedLibraries()) {
            String dev = dpkgOwner("lib" + library + ".so");
            if (dev != null) {
                checked.put(dev, devPackage(library));
            }
        }
        if (ShippedShim.readelfAvailable()) {
            for (String soname : ShippedShim.extractTo(dir).needed()) {
                String runtime = dpkgOwner(soname);
                if (runtime != null && !BASE_IMAGE.matcher(soname).matches()) {
                    checked.put(runtime, runtimePackage(soname));
                }
            }
        }
        assumeTrue(!checked.isEmpty(), "dpkg owns none of the shim's libraries (the -dev packages are not installed)");
        checked.forEach(
                (dpkg, rule) -> assertThat(rule).as("rule for dpkg's " + dpkg).isEqualTo(dpkg));
    }

    @Test
    void dockerIgnoreKeepsBuildOutputAndGitOutOfTheContext() throws IOException {
        Path ignore = ROOT.resolve(".dockerignore");
        assertThat(ignore)
                .as("the images' build context is the repository root")
                .isRegularFile();
        List<String> patterns =
                Files.readAllLines(ignore).stream().map(String::trim).toList();
        assertThat(patterns).contains(".git", "**/target");
    }

    /** Debian's rule for a shared library package: libfoo_bar.so.N is libfoo-barN (libfoo2.so.N: libfoo2-N). */
    static String runtimePackage(String soname) {
        Matcher m = Pattern.compile("lib(.+)\\.so\\.(\\d+)").matcher(soname);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a versioned soname: " + soname);
        }
        String name = "lib" + m.group(1).toLowerCase().replace('_', '-');
        return name + (Character.isDigit(name.charAt(name.length() - 1)) ? "-" : "") + m.group(2);
    }

    /** Debian's rule for the headers and link symlink of -lfoo_bar: libfoo-bar-dev. */
    static String devPackage(String library) {
        return "lib" + library.toLowerCase().replace('_', '-') + "-dev";
    }

    /** The package dpkg says owns a file of this name, else the rule's name. */
    private static String packageOwning(String fileName, String byRule) throws IOException {
        String owner = dpkgOwner(fileName);
        return owner != null ? owner : byRule;
    }

    /** The one package owning a file named fileName (in any directory) according to dpkg, or null (no dpkg, no owner, or several). */
    private static String dpkgOwner(String fileName) throws IOException {
        ShippedShim.Result r;
        try {
            r = ShippedShim.run("dpkg", "-S", "*/" + fileName);
        } catch (IOException noDpkg) {
            return null;
        }
        if (r.exitCode() != 0) {
            return null;
        }
        Set<String> owners = new TreeSet<>();
        for (String line : r.output().split("\n")) {
            int colon = line.indexOf(": ");
            if (line.startsWith("diversion ") || colon < 0) {
                continue;
            }
            for (String pkg : line.substring(0, colon).split(",\\s*")) {
                owners.add(pkg.replaceFirst(":.*", ""));
            }
        }
        return owners.size() == 1 ? owners.iterator().next() : null;
    }

    /** The names of native/pom.xml's -l arguments. */
    private static List<String> linkedLibraries() throws IOException {
        List<String> libraries = new ArrayList<>();
        Matcher m = Pattern.compile("<argument>-l([\\w.+-]+)</argument>")
                .matcher(Files.readString(ROOT.resolve("native/pom.xml")));
        while (m.find()) {
            libraries.add(m.group(1));
        }
        return libraries;
    }

    private static String buildStage() throws IOException {
        for (String stage : stages()) {
            if (stage.lines().findFirst().orElse("").matches("(?i)FROM\\s+\\S+\\s+AS\\s+build\\s*")) {
                return stage;
            }
        }
        throw new AssertionError(DOCKERFILE + " has no `AS build` stage");
    }

    private static String runtimeStage() throws IOException {
        List<String> stages = stages();
        assertThat(stages).as(DOCKERFILE + " is multi-stage").hasSizeGreaterThan(1);
        return stages.get(stages.size() - 1);
    }

    /** The Dockerfile's stages, each from its FROM line, with continuation lines joined. */
    private static List<String> stages() throws IOException {
        String text = Files.readString(ROOT.resolve(DOCKERFILE)).replaceAll("\\\\\\r?\\n", " ");
        List<String> stages = new ArrayList<>();
        StringBuilder current = null;
        for (String line : text.split("\n")) {
            if (line.matches("(?i)\\s*FROM\\s.*")) {
                if (current != null) {
                    stages.add(current.toString());
                }
                current = new StringBuilder();
            }
            if (current != null && !line.trim().startsWith("#")) {
                current.append(line.trim()).append('\n');
            }
        }
        if (current != null) {
            stages.add(current.toString());
        }
        return stages;
    }

    /** Packages named by the stage's {@code apt-get install} commands (options left out). */
    private static Set<String> aptInstalled(String stage) {
        Set<String> packages = new TreeSet<>();
        Matcher install = Pattern.compile("apt-get\\s+install\\s+([^&;|\\n]*)").matcher(stage);
        while (install.find()) {
            for (String word : install.group(1).trim().split("\\s+")) {
                if (!word.isEmpty() && !word.startsWith("-")) {
                    packages.add(word);
                }
            }
        }
        return packages;
    }

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve(DOCKERFILE))) {
                return dir;
            }
        }
        throw new IllegalStateException(
                DOCKERFILE + " not found above " + Path.of("").toAbsolutePath());
    }
}
