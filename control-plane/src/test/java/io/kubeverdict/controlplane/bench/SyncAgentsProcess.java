// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The simulated agents of {@link SyncFanoutBenchmark} in their own JVM process, so that the
 * server's JVM holds only the control plane. Arguments: the replicas' ports (comma-separated),
 * agents per replica. Opens one plaintext Sync stream per agent (node-0 .. node-N-1, each
 * replica's share in turn, see {@link SimulatedAgents}), writes "ready" to
 * stdout once all are in sync, then answers commands read from stdin, one per line:
 * <ul>
 *   <li>{@code clock}: replies {@code clock NANOS} (this JVM's System.nanoTime), so the benchmark
 *       can map this process's clock onto its own (offset of the reply with the shortest round trip);
 *   <li>{@code arm}: forgets earlier arrivals, replies {@code armed}; then writes {@code complete}
 *       once every agent has received a delta since;
 *   <li>{@code report}: replies {@code report COUNT} followed by {@code INDEX NANOS} pairs, the
 *       first delta arrival since {@code arm} of each agent that had one.
 * </ul>
 * Nothing is written while deltas arrive: the per-round report travels after the round. Exits
 * when stdin closes.
 */
public final class SyncAgentsProcess {
    private static final PrintStream OUT =
            new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        int[] ports = java.util.Arrays.stream(args[0].split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        int agents = Integer.parseInt(args[1]);
        SimulatedAgents all = SimulatedAgents.connect(ports, agents, () -> reply("complete"));
        reply("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String cmd; (cmd = in.readLine()) != null; ) {
            switch (cmd) {
                case "clock" -> reply("clock " + System.nanoTime());
                case "arm" -> {
                    all.arm();
                    reply("armed");
                }
                case "report" -> {
                    long[] first = all.arrivals();
                    StringBuilder sb = new StringBuilder("report ");
                    int count = 0;
                    StringBuilder pairs = new StringBuilder();
                    for (int i = 0; i < first.length; i++) {
                        if (first[i] != 0) {
                            count++;
                            pairs.append(' ').append(i).append(' ').append(first[i]);
                        }
                    }
                    reply(sb.append(count).append(pairs).toString());
                }
                default -> System.err.println("agents process: unknown command " + cmd);
            }
        }
        all.close();
        System.exit(0);
    }

    static void reply(String line) {
        synchronized (OUT) {
            OUT.print(line);
            OUT.print('\n');
            OUT.flush();
        }
    }
}
