// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.agent.conntrack.TestSnapshots.allowFrom;
import static io.kubeverdict.agent.conntrack.TestSnapshots.endpoint;
import static io.kubeverdict.agent.conntrack.TestSnapshots.node;
import static io.kubeverdict.agent.conntrack.TestSnapshots.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.agent.state.SelectedAddresses;
import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.tier.KernelTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Audit M9: the memory of a re-judging pass does not grow with the node's conntrack table. A
 * namespace's table holds many unrelated entries ({@code conntrack -R}) and a few of 20 selected
 * endpoints (more addresses than per-address dumps: one dump of the family by mark alone, every
 * uncut entry when the agent starts). The pass judges and cuts exactly the endpoints' denied
 * connections, examines nothing else, and never holds more than one chunk of entries, whatever
 * the table's size. {@code -Dkv.rejudge.unrelated=200000} makes it the figure in docs/benchmarks.md
 * (a namespace's table holds at most nf_conntrack_max entries, 262 144 on the test machine).
 */
@KernelTest
class RejudgeBoundsKernelTest {
    private static final int UNRELATED = Integer.getInteger("kv.rejudge.unrelated", 50_000);
    private static final int ENDPOINTS = 20;

    private TestNamespace ns;
    private NetnsThread thread;
    private ConntrackRejudger rejudger;

    @BeforeEach
    void setUp() throws Exception {
        ns = TestNamespace.create("kvt-rjb");
        thread = new NetnsThread(ns.path());
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (rejudger != null) {
                rejudger.close();
            }
            thread.close();
        } finally {
            ns.close(); // the namespace's conntrack entries go with it
        }
    }

    /** The table of the namespace, remembering the largest buffer a dump was handed. */
    private static final class Recording implements ConntrackTable {
        final ConntrackTable table;
        final AtomicInteger largestBuffer = new AtomicInteger();
        final AtomicLong delivered = new AtomicLong();

        Recording(ConntrackTable table) {
            this.table = table;
        }

        @Override
        public int dump(ConntrackQuery query, ConntrackEntries chunk, Conntrack.Chunks chunks) {
            int n = table.dump(query, chunk, chunks);
            largestBuffer.accumulateAndGet(chunk.capacity(), Math::max);
            delivered.addAndGet(n);
            return n;
        }

        @Override
        public boolean setMark(ConntrackEntries entries, int i, int value, int mask) {
            return table.setMark(entries, i, value, mask);
        }

        @Override
        public void close() {
            table.close();
        }
    }

    @Test
    void aPassHoldsOneChunkOfEntriesWhateverTheTableSize() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < UNRELATED; i++) { // a UDP flood from a pod no policy selects, and the like
            lines.add("-I -p udp -s 10.200." + (i / 250 % 250) + "." + (i % 250 + 1) + " -d 10.201." + (i / 62_500)
                    + ".1 --sport " + (1024 + i % 60_000) + " --dport 53 -t 600 -m 0");
        }
        NodeSnapshot.Builder snapshot = node().addIpSets(set("sa", "10.0.0.1")).addPolicies(allowFrom("p", "sa", 80));
        for (int i = 0; i < ENDPOINTS; i++) {
            snapshot.addEndpoints(endpoint("b" + i, "10.0.1." + (i + 1), "p"));
            lines.add(tcp("10.0.0.1", "10.0.1." + (i + 1), 2000 + i, 80)); // allowed
            lines.add(tcp("10.0.0.1", "10.0.1." + (i + 1), 3000 + i, 81)); // denied
        }
        insert(lines);
        Recording table = new Recording(thread.call(ConntrackTable::open));
        ConntrackRejudgerTest.Recorder observer = new ConntrackRejudgerTest.Recorder();
        rejudger = new ConntrackRejudger(
                () -> table,
                Set::of,
                ConntrackRejudger.VerdictsInFlight.NONE,
                CutSink.NONE,
                observer,
                System::nanoTime);
        NodeSnapshot s = snapshot.build();
        long start = System.nanoTime();
        rejudger.changed(null, new EnforcedState(s, SnapshotIndex.compile(s), SelectedAddresses.of(s), 1, 0), true);
        assertThat(rejudger.awaitJudged(600_000)).isTrue();
        long passMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(observer.cut.get()).as("each endpoint's denied connection").isEqualTo(ENDPOINTS);
        assertThat(observer.examined.get())
                .as("the endpoints' connections only")
                .isEqualTo(2 * ENDPOINTS);
        assertThat(table.delivered.get())
                .as("one dump by mark alone: the kernel delivers every uncut entry")
                .isGreaterThanOrEqualTo(UNRELATED + 2L * ENDPOINTS);
        assertThat(table.largestBuffer.get()).as("entries held at once").isLessThanOrEqualTo(TableDumps.CHUNK_ENTRIES);
        String cut = ns.exec("conntrack", "-L", "-m", FlowMarks.CUT + "/" + FlowMarks.CUT);
        assertThat(cut.lines().filter(l -> l.contains("dport=81")).count()).isEqualTo(ENDPOINTS);
        System.out.printf(
                "rejudge bounds: %d unrelated entries, %d delivered, pass %d ms, largest buffer %d entries%n",
                UNRELATED, table.delivered.get(), passMillis, table.largestBuffer.get());
    }

    private static String tcp(String src, String dst, int sport, int dport) {
        return "-I -p tcp -s " + src + " -d " + dst + " --sport " + sport + " --dport " + dport
                + " --state ESTABLISHED -t 600 -u ASSURED -m " + FlowMarks.ADMITTED;
    }

    private void insert(List<String> commands) throws Exception {
        Path file = Files.createTempFile("kvt-rjb", ".txt");
        try {
            Files.write(file, commands);
            ns.exec("conntrack", "-R", file.toString());
        } finally {
            Files.delete(file);
        }
    }
}
