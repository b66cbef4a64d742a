// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.testing.flow.InNamespace;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** A network namespace made for one test and removed on close, also when the test failed. */
public final class TestNamespace implements AutoCloseable {
    private final String name;

    private TestNamespace(String name) {
        this.name = name;
    }

    public static TestNamespace create(String prefix) throws IOException, InterruptedException {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        run(List.of("ip", "netns", "add", name));
        TestNamespace ns = new TestNamespace(name);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    public String name() {
        return name;
    }

    public String path() {
        return "/run/netns/" + name;
    }

    /** Work on a thread inside this namespace: the sockets it opens stay here. */
    public InNamespace inside() {
        String path = path();
        return new InNamespace() {
            @Override
            public <T> T call(Callable<T> work) throws Exception {
                return Netns.call(path, work);
            }
        };
    }

    /** Runs a command inside the namespace and returns its output; fails on a non-zero exit. */
    public String exec(String... command) throws IOException, InterruptedException {
        List<String> full = new java.util.ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(command));
        return run(full);
    }

    /** Runs a command inside the namespace and returns its exit code and output, without failing. */
    public Result tryExec(String... command) throws IOException, InterruptedException {
        List<String> full = new java.util.ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(command));
        Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, out);
        }
        return new Result(p.exitValue(), out);
    }

    /** Exit code and combined output of a command. */
    public record Result(int exitCode, String output) {}

    static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run(List.of("ip", "netns", "delete", name));
    }
}
