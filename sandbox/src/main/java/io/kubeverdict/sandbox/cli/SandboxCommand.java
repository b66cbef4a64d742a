// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox.cli;

import io.kubeverdict.runtime.cli.DurationText;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.sandbox.Launcher;
import io.kubeverdict.sandbox.Placement;
import io.kubeverdict.sandbox.ProbeJson;
import io.kubeverdict.sandbox.ProbeResult;
import io.kubeverdict.sandbox.Progress;
import io.kubeverdict.sandbox.Sandbox;
import io.kubeverdict.sandbox.SandboxException;
import io.kubeverdict.sandbox.SandboxOptions;
import io.kubeverdict.sandbox.TableRenderer;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "sandbox",
        mixinStandardHelpOptions = true,
        description = {
            "Run the whole system locally: pods as network namespaces, the control plane and one agent per node"
                    + " as real processes, every pod pair probed with real connections and compared with the policy engine"
                    + " (what `matrix` prints).",
            "Needs root. Exit code 0 when observed == expected for every probe, 1 on a mismatch, 2 on an error."
        })
public final class SandboxCommand implements Callable<Integer> {
    @Option(
            names = "--manifests",
            paramLabel = "DIR",
            description = "Manifest directory (Namespaces, Nodes, Pods, NetworkPolicies, admin-tier policies)."
                    + " Pods keep the node and IPs they have. Default: deploy/examples/netpol-basic.")
    Path manifests;

    @Option(
            names = "--nodes",
            paramLabel = "N",
            defaultValue = "2",
            description = "Nodes to spread pods without spec.nodeName over when the manifests have no Node objects"
                    + " (default: ${DEFAULT-VALUE}). Node objects define the nodes and their addresses.")
    int nodes;

    @Option(
            names = "--probe",
            paramLabel = "PORT/PROTO",
            arity = "1..*",
            description =
                    "Port to probe, e.g. 80/TCP 81/UDP (repeatable); every pod serves it, hostNetwork pods on their"
                            + " node's address. Default: every container port of the pods.")
    List<String> probes = new ArrayList<>();

    @Option(
            names = "--output",
            paramLabel = "table|json",
            defaultValue = "table",
            description = "table (default) or json: one JSON object per probe and line.")
    String output;

    @Option(names = "--watch", description = "Stay up; re-probe whenever a file in the manifest directory changes.")
    boolean watch;

    @Option(
            names = "--keep",
            description =
                    "Leave everything running after probing and print how to reach each process; Ctrl-C tears down.")
    boolean keep;

    @Option(
            names = "--console",
            arity = "0..1",
            paramLabel = "HOST:PORT",
            fallbackValue = "127.0.0.1:9180",
            converter = HostPort.Listen.class,
            description =
                    "With --keep: forward this address (default 127.0.0.1:9180) to the control plane's web console,"
                            + " as kubectl port-forward would, and print its URL.")
    HostPort console;

    @Option(
            names = "--pod-cidr",
            paramLabel = "CIDR",
            defaultValue = Placement.DEFAULT_POD_CIDR,
            description = "The cluster's pod range (default: ${DEFAULT-VALUE}): nodes without Node spec.podCIDRs get a"
                    + " subnet each (node-1 10.244.1.0/24, ...) where it fits the manifests' pod addresses, so"
                    + " every agent runs its pod address guard; pods without status.podIPs take addresses of"
                    + " their node's range, as `matrix --assign-ips`.")
    String podCidr;

    @Option(
            names = "--probe-timeout",
            paramLabel = "DURATION",
            defaultValue = "1500ms",
            converter = DurationText.OrMillis.class,
            description = "How long a probe waits for an answer (1500ms, 2s; a bare number is milliseconds; "
                    + "default: ${DEFAULT-VALUE}).")
    Duration probeTimeout;

    @Option(
            names = "--prefix",
            paramLabel = "PREFIX",
            defaultValue = SandboxOptions.DEFAULT_PREFIX,
            hidden = true,
            description = "Name prefix of the network namespaces.")
    String prefix;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Progress progress = new Progress(err);
        if (console != null && !keep) {
            err.println("sandbox: --console needs --keep (the console lives as long as the sandbox)");
            return 2;
        }
        if (!output.equals("table") && !output.equals("json")) {
            err.println("sandbox: --output must be table or json");
            return 2;
        }
        SandboxOptions options;
        try {
            List<ServePort> targets = new ArrayList<>();
            probes.forEach(p -> targets.add(ServePort.parse(p)));
            Path dir = manifests != null ? manifests : Launcher.home().resolve("deploy/examples/netpol-basic");
            options = new SandboxOptions(dir.toAbsolutePath(), nodes, targets, podCidr, probeTimeout, prefix);
        } catch (IllegalArgumentException e) {
            err.println("sandbox: " + e.getMessage());
            return 2;
        }
        Sandbox sandbox = null;
        try {
            sandbox = Sandbox.start(options, progress);
            int code = probeAndPrint(sandbox, progress, out);
            if (watch) {
                watchLoop(sandbox, options, progress, out);
            }
            if (keep) {
                err.print(sandbox.accessHelp());
                if (console != null) {
                    err.println("console: " + sandbox.forwardConsole(console.socketAddress()));
                }
                err.println("kept running; Ctrl-C removes everything");
                Thread.currentThread().join();
            }
            return code;
        } catch (SandboxException e) {
            err.println("sandbox: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 2;
        } catch (Exception e) {
            err.println("sandbox: failed: " + e);
            e.printStackTrace(err);
            return 2;
        } finally {
            if (sandbox != null) {
                progress.step("tearing down");
                sandbox.close();
                progress.done();
            }
        }
    }

    private int probeAndPrint(Sandbox sandbox, Progress progress, PrintWriter out) throws Exception {
        progress.step("probing " + sandbox.probes());
        List<ProbeResult> results = sandbox.probeAll();
        progress.done();
        boolean agree = true;
        for (ProbeResult r : results) {
            out.print(output.equals("json") ? ProbeJson.write(r) + "\n" : TableRenderer.render(r) + "\n");
            agree &= r.agrees();
        }
        out.flush();
        long unsupported = results.stream().filter(ProbeResult::unsupported).count();
        progress.note((agree ? "observed == expected" : "MISMATCH: observed != expected")
                + (unsupported > 0
                        ? " (" + unsupported + " SCTP probes not run: no SCTP sockets on this kernel)"
                        : ""));
        return agree ? 0 : 1;
    }

    /** Re-probes on every change of the manifest directory until Ctrl-C; pod changes rebuild the sandbox. */
    private void watchLoop(Sandbox first, SandboxOptions options, Progress progress, PrintWriter out) throws Exception {
        Sandbox sandbox = first;
        try (WatchService watcher = FileSystems.getDefault().newWatchService()) {
            options.manifests()
                    .register(
                            watcher,
                            StandardWatchEventKinds.ENTRY_CREATE,
                            StandardWatchEventKinds.ENTRY_MODIFY,
                            StandardWatchEventKinds.ENTRY_DELETE);
            progress.note("watching " + options.manifests() + " (Ctrl-C to stop)");
            while (true) {
                WatchKey key = watcher.take();
                // Editors write in several steps: let the burst finish.
                do {
                    key.pollEvents();
                    key.reset();
                } while ((key = watcher.poll(300, TimeUnit.MILLISECONDS)) != null);
                progress.step("manifests changed: applying");
                boolean podsUnchanged;
                try {
                    // A pod left out of the manifests would leave a pod nobody probes: rebuild too.
                    podsUnchanged = sandbox.reload() && sandbox.away().isEmpty();
                } catch (IOException | RuntimeException e) {
                    // A broken manifest or a slow agent must not end the watch: say so, keep watching.
                    progress.note("cannot apply: " + e.getMessage());
                    continue;
                }
                if (!podsUnchanged) {
                    // New, removed or moved pods need a new bed; if that fails, the watch ends.
                    progress.note("pods changed: rebuilding the sandbox");
                    sandbox.close();
                    sandbox = Sandbox.start(options, progress);
                }
                probeAndPrint(sandbox, progress, out);
            }
        } finally {
            if (sandbox != first) {
                sandbox.close();
            }
        }
    }
}
