// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs kernel and end-to-end tests only where they can work: root, the iproute2 and nftables
 * commands, the NFQUEUE module, and (when the agent's classes are on the test class path) the
 * JNI shim loaded. Elsewhere they are skipped, naming what is missing.
 *
 * <p>Fail closed: a root machine that lacks any of these has a broken setup (scripts/setup.sh
 * installs them), so there the tests FAIL instead of being silently skipped, which would turn CI
 * green on nothing. {@code -Dkubeverdict.kernel-tests=skip|require} overrides: skip them always,
 * or fail whenever something is missing (root or not).
 */
public final class KernelRequirements implements ExecutionCondition {
    static final String MODE_PROPERTY = "kubeverdict.kernel-tests";
    private static final String NATIVE_LIBRARY = "io.kubeverdict.jni.NativeLibrary";

    /** What this machine offers, read once per JVM. */
    record Machine(boolean root, List<String> commandsOnPath, boolean nfqueueModule, Optional<String> nativeProblem) {}

    private static volatile Machine machine;

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Machine m = machine();
        List<String> missing = missing(m);
        String mode = System.getProperty(MODE_PROPERTY, "auto");
        if ("skip".equals(mode)) {
            return ConditionEvaluationResult.disabled("kernel tests skipped (-D" + MODE_PROPERTY + "=skip)");
        }
        if (missing.isEmpty()) {
            return ConditionEvaluationResult.enabled("root, nft, ip, nfnetlink_queue and the shim are here");
        }
        String what = String.join("; ", missing);
        if ("require".equals(mode) || m.root()) {
            throw new IllegalStateException("kernel test cannot run, although "
                    + ("require".equals(mode) ? "-D" + MODE_PROPERTY + "=require" : "this runs as root")
                    + ": " + what + " (run scripts/setup.sh)");
        }
        return ConditionEvaluationResult.disabled("kernel test skipped: " + what);
    }

    /** What keeps kernel tests from running here, in words; empty when nothing does. */
    static List<String> missing(Machine m) {
        List<String> out = new ArrayList<>();
        if (!m.root()) {
            out.add("not root (namespaces, nftables and NFQUEUE need CAP_NET_ADMIN/CAP_SYS_ADMIN)");
        }
        for (String command : List.of("ip", "nft")) {
            if (!m.commandsOnPath().contains(command)) {
                out.add("no '" + command + "' command on PATH");
            }
        }
        if (!m.nfqueueModule()) {
            out.add("kernel module nfnetlink_queue not loaded (modprobe nfnetlink_queue)");
        }
        m.nativeProblem().ifPresent(p -> out.add("JNI shim not loaded: " + p));
        return out;
    }

    /**
     * A loaded module has /sys/module/nfnetlink_queue; a built-in one (CONFIG_NETFILTER_NETLINK_QUEUE=y,
     * as on this CI kernel) has no such directory, but either way the kernel offers the queue's
     * /proc file.
     */
    private static boolean nfqueueAvailable() {
        return Files.exists(Path.of("/sys/module/nfnetlink_queue"))
                || Files.exists(Path.of("/proc/net/netfilter/nfnetlink_queue"));
    }

    private static Machine machine() {
        Machine m = machine;
        if (m == null) {
            m = new Machine(isRoot(), commandsOnPath(List.of("ip", "nft")), nfqueueAvailable(), nativeProblem());
            machine = m;
        }
        return m;
    }

    private static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    String[] f = line.split("\\s+");
                    return f.length > 2 && f[2].equals("0"); // effective uid
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    private static List<String> commandsOnPath(List<String> commands) {
        List<String> found = new ArrayList<>();
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String c : commands) {
            for (String dir : path.split(":")) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, c))) {
                    found.add(c);
                    break;
                }
            }
        }
        return found;
    }

    /** The shim's load failure, when the agent's classes are there to load it; empty otherwise. */
    private static Optional<String> nativeProblem() {
        try {
            Class<?> lib = Class.forName(NATIVE_LIBRARY);
            Method available = lib.getMethod("isAvailable");
            if ((Boolean) available.invoke(null)) {
                return Optional.empty();
            }
            Object cause = lib.getMethod("unavailabilityCause").invoke(null);
            return Optional.of(String.valueOf(cause));
        } catch (ClassNotFoundException e) {
            return Optional.empty(); // a module without the agent: its kernel tests use commands only
        } catch (ReflectiveOperationException | RuntimeException e) {
            return Optional.of(e.toString());
        }
    }
}
