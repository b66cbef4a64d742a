// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import io.kubeverdict.jni.NetnsThread;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Nodes and pods as network namespaces on this machine, with servers on the pods' ports and a
 * prober for every ordered pod pair. Pure orchestration of iproute2: no kernel policy of its own.
 * Everything it makes is removed by {@link #close()}, which a shutdown hook also runs (Ctrl-C),
 * and leftovers of a crashed run with the same prefix are removed before a new one starts.
 */
public final class Testbed implements AutoCloseable {
    private final TestbedLayout layout;
    private final Map<String, NetnsThread> podThreads = new LinkedHashMap<>();
    private final Map<String, NetnsThread> otherThreads = new LinkedHashMap<>();
    private final Thread shutdownHook;
    private PodServers servers;
    private Prober prober;
    private boolean closed;

    private Testbed(TestbedLayout layout) {
        this.layout = layout;
        this.shutdownHook = new Thread(this::closeQuietly, "testbed-cleanup-" + layout.runName());
    }

    /**
     * Creates the namespaces, links, addresses and routes of the nodes and pods, and starts the
     * pods' servers. prefix names the namespaces (e.g. "kvt-sb-"); this process's PID is appended.
     */
    public static Testbed create(String prefix, List<String> nodes, List<PodSpec> pods) throws Exception {
        return create(prefix, nodes, Map.of(), pods);
    }

    /** As above, with nodes' own addresses ({@link TestbedLayout}); hostNetwork pods live in their node's namespace. */
    public static Testbed create(
            String prefix, List<String> nodes, Map<String, List<java.net.InetAddress>> nodeIps, List<PodSpec> pods)
            throws Exception {
        Leftovers.remove(prefix);
        Testbed bed = new Testbed(new TestbedLayout(Leftovers.runName(prefix), nodes, nodeIps, pods));
        Runtime.getRuntime().addShutdownHook(bed.shutdownHook);
        try {
            bed.build();
            return bed;
        } catch (Exception | Error e) {
            bed.close();
            throw e;
        }
    }

    private void build() throws Exception {
        Commands.run(List.of("ip", "-batch", "-"), layout.createNamespacesScript());
        for (Map.Entry<String, List<String>> e : layout.sysctls().entrySet()) {
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", e.getKey(), "sysctl", "-q", "-w"));
            cmd.addAll(e.getValue());
            Commands.run(cmd);
        }
        batch(layout.fabricNamespace(), layout.fabricScript());
        for (String node : layout.nodes()) {
            batch(layout.nodeNamespace(node), layout.nodeScript(node));
        }
        Map<String, NetnsThread> byNamespace = new LinkedHashMap<>();
        for (PodSpec pod : layout.pods()) {
            String namespace = layout.podNamespace(pod.name());
            if (!pod.hostNetwork()) {
                batch(namespace, layout.podScript(pod));
            }
            // hostNetwork pods of one node share its namespace, and so one thread.
            NetnsThread thread = byNamespace.get(namespace);
            if (thread == null) {
                thread = NetnsThread.named(namespace);
                byNamespace.put(namespace, thread);
            }
            podThreads.put(pod.name(), thread);
        }
        servers = new PodServers(layout.pods(), podThreads);
        prober = new Prober(layout.pods(), podThreads);
    }

    private static void batch(String namespace, String script) throws IOException {
        Commands.run(List.of("ip", "-n", namespace, "-batch", "-"), script);
    }

    public TestbedLayout layout() {
        return layout;
    }

    /** Probes every ordered pair of pods (sorted by name) on target; a pair not answered within timeout is TIMEOUT. */
    public ObservedMatrix probe(ServePort target, Duration timeout) throws Exception {
        if (closed) {
            throw new IllegalStateException("testbed closed");
        }
        return prober.probe(target, timeout);
    }

    /**
     * Runs work on a thread inside a namespace of this testbed: sockets it opens stay there, so
     * the caller can reach services that listen inside the testbed (e.g. on the fabric).
     */
    public <T> T callIn(String namespace, java.util.concurrent.Callable<T> work) throws Exception {
        NetnsThread thread;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("testbed closed");
            }
            if (!layout.namespaces().contains(namespace)) {
                throw new IllegalArgumentException("not a namespace of this testbed: " + namespace);
            }
            thread = otherThreads.get(namespace);
            if (thread == null) {
                thread = NetnsThread.named(namespace);
                otherThreads.put(namespace, thread);
            }
        }
        return thread.call(work);
    }

    /** Runs a command inside a namespace of this testbed and returns its output. */
    public String exec(String namespace, String... command) throws IOException {
        if (!layout.namespaces().contains(namespace)) {
            throw new IllegalArgumentException("not a namespace of this testbed: " + namespace);
        }
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
        cmd.addAll(List.of(command));
        return Commands.run(cmd);
    }

    /** Stops the servers and removes every namespace (and with them every link and route). */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // we are the hook, or the JVM is exiting anyway
        }
        IOException failure = null;
        try {
            if (servers != null) {
                servers.close();
            }
        } catch (IOException e) {
            failure = e;
        }
        podThreads.values().stream().distinct().forEach(NetnsThread::close);
        otherThreads.values().forEach(NetnsThread::close);
        StringBuilder script = new StringBuilder();
        for (String ns : layout.namespaces()) {
            if (java.nio.file.Files.exists(java.nio.file.Path.of("/run/netns", ns))) {
                script.append("netns del ").append(ns).append('\n');
            }
        }
        try {
            if (!script.isEmpty()) {
                Commands.run(List.of("ip", "-force", "-batch", "-"), script.toString());
            }
        } catch (IOException e) {
            failure = e;
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException e) {
            System.err.println("testbed: cleanup of " + layout.runName() + " failed: " + e.getMessage());
        }
    }
}
