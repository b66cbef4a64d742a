// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.testing.TestNamespace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shim's ctnetlink dump, mark update and delete against a namespace's own conntrack table,
 * filled with {@code conntrack -I} entries: the kernel filters by family, mark and the source
 * address of either tuple, and changes exactly the entry asked for.
 */
class ConntrackKernelTest {
    private static final int MARK = 0x0800_0000;
    private TestNamespace ns;
    private NetnsThread thread;
    private Conntrack conntrack;

    @BeforeEach
    void setUp() throws Exception {
        ns = TestNamespace.create("kvt-ct");
        thread = new NetnsThread(ns.path());
        conntrack = thread.call(Conntrack::new);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (conntrack != null) {
                conntrack.close();
            }
            if (thread != null) {
                thread.close();
            }
        } finally {
            ns.close(); // the namespace's conntrack entries go with it
        }
    }

    /** Inserts entries with one conntrack -R run (one -I command per line). */
    private void insert(List<String> commands) throws Exception {
        Path file = Files.createTempFile("kvt-ct", ".txt");
        try {
            Files.write(file, commands);
            ns.exec("conntrack", "-R", file.toString());
        } finally {
            Files.delete(file);
        }
    }

    private static String tcp(String src, String dst, int sport, int dport, int mark) {
        return "-I -p tcp -s " + src + " -d " + dst + " --sport " + sport + " --dport " + dport
                + " --state ESTABLISHED -t 600 -u ASSURED -m " + mark;
    }

    private static Set<Integer> sourcePorts(ConntrackEntries e) {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < e.size(); i++) {
            ports.add(e.originalSourcePort(i));
        }
        return ports;
    }

    @Test
    void theKernelFiltersByMarkAndByEitherTuplesSource() throws Exception {
        insert(List.of(
                tcp("10.1.0.1", "10.2.0.1", 1001, 80, MARK),
                tcp("10.1.0.1", "10.2.0.2", 1002, 80, 0),
                tcp("10.1.0.2", "10.2.0.1", 1003, 80, MARK | 0x10),
                // opened to a service address, answered by 10.2.0.1:8080 (DNAT)
                "-I -p tcp -s 10.1.0.3 -d 10.96.0.10 --sport 1004 --dport 80 -r 10.2.0.1 -q 10.1.0.3"
                        + " --reply-port-src 8080 --reply-port-dst 1004 --state ESTABLISHED -t 600 -m " + MARK,
                "-I -p udp -s fd00::1 -d fd00::2 --sport 1005 --dport 53 -t 600 -m " + MARK));
        ConntrackEntries e = new ConntrackEntries(4);

        assertThat(conntrack.dump(ConntrackQuery.marked(4, 0, 0), e)).isEqualTo(4);
        assertThat(conntrack.dump(ConntrackQuery.marked(4, MARK, MARK), e)).isEqualTo(3);
        assertThat(sourcePorts(e)).containsExactlyInAnyOrder(1001, 1003, 1004);
        assertThat(conntrack.dump(ConntrackQuery.marked(4, 0, MARK), e))
                .as("mark bit clear")
                .isEqualTo(1);

        IpAddress client = IpAddress.parse("10.1.0.1");
        conntrack.dump(ConntrackQuery.of(client, ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e);
        assertThat(sourcePorts(e)).containsExactlyInAnyOrder(1001, 1002);
        conntrack.dump(ConntrackQuery.of(client, ConntrackQuery.Match.ORIGINAL_SOURCE, MARK, MARK), e);
        assertThat(sourcePorts(e)).containsExactly(1001);

        IpAddress server = IpAddress.parse("10.2.0.1");
        conntrack.dump(ConntrackQuery.of(server, ConntrackQuery.Match.REPLY_SOURCE, 0, 0), e);
        assertThat(sourcePorts(e))
                .as("opened to the server, directly or through DNAT")
                .containsExactlyInAnyOrder(1001, 1003, 1004);
        conntrack.dump(ConntrackQuery.of(server, ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e);
        assertThat(e.size()).as("the server opened nothing").isZero();

        conntrack.dump(ConntrackQuery.of(IpAddress.parse("10.1.0.3"), ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e);
        assertThat(e.size()).isEqualTo(1);
        assertThat(e.protocol(0)).isEqualTo(6);
        assertThat(e.originalSource(0)).isEqualTo(IpAddress.parse("10.1.0.3"));
        assertThat(e.originalDestination(0)).isEqualTo(IpAddress.parse("10.96.0.10"));
        assertThat(e.originalDestinationPort(0)).isEqualTo(80);
        assertThat(e.replySource(0)).as("the destination after DNAT").isEqualTo(server);
        assertThat(e.replySourcePort(0)).isEqualTo(8080);
        assertThat(e.mark(0)).isEqualTo(MARK);
        assertThat(e.tcpState(0)).isEqualTo(ConntrackEntries.TCP_ESTABLISHED);
        assertThat(e.hasPorts(0)).isTrue();

        assertThat(conntrack.dump(ConntrackQuery.marked(6, MARK, MARK), e)).isEqualTo(1);
        assertThat(e.family(0)).isEqualTo(6);
        assertThat(e.originalSource(0)).isEqualTo(IpAddress.parse("fd00::1"));
        assertThat(e.replySource(0)).isEqualTo(IpAddress.parse("fd00::2"));
        assertThat(e.replySourcePort(0)).isEqualTo(53);
        assertThat(e.tcpState(0)).isEqualTo(-1);
        // IPv6: the kernel's address filter is inverted (see kv_conntrack.c), the shim compares instead
        conntrack.dump(ConntrackQuery.of(IpAddress.parse("fd00::2"), ConntrackQuery.Match.REPLY_SOURCE, 0, 0), e);
        assertThat(sourcePorts(e)).containsExactly(1005);
        assertThat(conntrack.dump(
                        ConntrackQuery.of(IpAddress.parse("fd00::9"), ConntrackQuery.Match.REPLY_SOURCE, 0, 0), e))
                .isZero();
        conntrack.dump(
                ConntrackQuery.of(IpAddress.parse("fd00::1"), ConntrackQuery.Match.ORIGINAL_SOURCE, MARK, MARK), e);
        assertThat(sourcePorts(e)).containsExactly(1005);
        assertThat(conntrack.dump(
                        ConntrackQuery.of(IpAddress.parse("fd00::2"), ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e))
                .isZero();
    }

    @Test
    void marksChangeOnlyTheMaskedBitsOfOneEntryAndAVanishedEntryIsReported() throws Exception {
        insert(List.of(
                tcp("10.1.0.1", "10.2.0.1", 2001, 80, MARK | 0x1),
                tcp("10.1.0.1", "10.2.0.1", 2002, 80, MARK),
                "-I -p icmp -s 10.1.0.1 -d 10.2.0.1 --icmp-type 8 --icmp-code 0 --icmp-id 77 -t 600 -m " + MARK));
        ConntrackEntries e = new ConntrackEntries(4);
        conntrack.dump(ConntrackQuery.of(IpAddress.parse("10.1.0.1"), ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e);
        assertThat(e.size()).isEqualTo(3);
        for (int i = 0; i < e.size(); i++) {
            if (e.protocol(i) == 1 || e.originalSourcePort(i) == 2001) {
                // clear MARK, set 0x0400_0000, keep the rest
                assertThat(conntrack.setMark(e, i, 0x0400_0000, MARK | 0x0400_0000))
                        .isTrue();
            }
        }
        ConntrackEntries after = new ConntrackEntries(4);
        conntrack.dump(ConntrackQuery.marked(4, 0x0400_0000, 0x0400_0000), after);
        List<String> cut = new ArrayList<>();
        for (int i = 0; i < after.size(); i++) {
            cut.add(after.protocol(i) + "/" + after.originalSourcePort(i) + "/" + Integer.toHexString(after.mark(i)));
        }
        assertThat(cut).containsExactlyInAnyOrder("6/2001/4000001", "1/77/4000000");
        assertThat(conntrack.dump(ConntrackQuery.marked(4, MARK, MARK), after))
                .as("the other entry untouched")
                .isEqualTo(1);

        ns.exec("conntrack", "-D", "-p", "tcp", "--sport", "2002");
        int gone = -1;
        for (int i = 0; i < e.size(); i++) {
            if (e.protocol(i) == 6 && e.originalSourcePort(i) == 2002) {
                gone = i;
            }
        }
        assertThat(conntrack.setMark(e, gone, 0, MARK))
                .as("vanished since the dump")
                .isFalse();
    }

    @Test
    void deleteRemovesOnlyTheEntryItWasShown() throws Exception {
        insert(List.of(tcp("10.1.0.1", "10.2.0.1", 3001, 80, 0)));
        ConntrackEntries e = new ConntrackEntries(4);
        conntrack.dump(ConntrackQuery.marked(4, 0, 0), e);
        assertThat(e.size()).isEqualTo(1);
        // An entry of the same tuple with another id is another entry. (Not made by deleting and
        // inserting again: the kernel's id hashes the entry's address, and the new entry often
        // reuses the old one's memory, so its id.)
        int id = e.id(0);
        e.buffer().putInt(ConntrackEntries.ID, id ^ 1);
        assertThat(conntrack.delete(e, 0)).as("another id: not this entry").isFalse();
        assertThat(conntrack.dump(ConntrackQuery.marked(4, 0, 0), new ConntrackEntries(4)))
                .isEqualTo(1);
        e.buffer().putInt(ConntrackEntries.ID, id);
        assertThat(conntrack.delete(e, 0)).isTrue();
        assertThat(conntrack.dump(ConntrackQuery.marked(4, 0, 0), new ConntrackEntries(4)))
                .isZero();
        assertThat(conntrack.delete(e, 0)).as("gone").isFalse();
    }

    @Test
    void aDumpLargerThanTheBufferGrowsIt() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            many.add(tcp("10.5." + (i / 250) + "." + (i % 250 + 1), "10.6.0.1", 10000 + i, 80, MARK));
        }
        insert(many);
        ConntrackEntries e = new ConntrackEntries(16);
        assertThat(conntrack.dump(ConntrackQuery.marked(4, MARK, MARK), e)).isEqualTo(3000);
        assertThat(sourcePorts(e)).hasSize(3000);
    }

    /** Audit M9: a dump larger than the buffer streams through it; entries are marked meanwhile. */
    @Test
    void aDumpStreamsThroughABufferOfFixedSizeAndEntriesCanBeMarkedMeanwhile() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            many.add(tcp("10.5." + (i / 250) + "." + (i % 250 + 1), "10.6.0.1", 10000 + i, 80, 0));
        }
        insert(many);
        ConntrackEntries chunk = new ConntrackEntries(16);
        Set<Integer> ports = new HashSet<>();
        List<Integer> sizes = new ArrayList<>();
        int total = conntrack.dump(ConntrackQuery.marked(4, 0, MARK), chunk, c -> {
            sizes.add(c.size());
            for (int i = 0; i < c.size(); i++) {
                ports.add(c.originalSourcePort(i));
                conntrack.setMark(c, i, MARK, MARK);
            }
        });
        assertThat(total).isEqualTo(3000);
        assertThat(ports).hasSize(3000);
        assertThat(sizes).allSatisfy(n -> assertThat(n).isBetween(1, 16));
        assertThat(chunk.capacity()).isEqualTo(16);
        assertThat(conntrack.dump(ConntrackQuery.marked(4, MARK, MARK), new ConntrackEntries(16)))
                .as("every entry marked while the dump ran")
                .isEqualTo(3000);
    }

    @Test
    void aDumpLeftHalfReadIsReadToItsEndByTheNext() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            many.add(tcp("10.7." + (i / 250) + "." + (i % 250 + 1), "10.6.0.1", 20000 + i, 80, 0));
        }
        insert(many);
        ConntrackEntries chunk = new ConntrackEntries(16);
        try {
            conntrack.dump(ConntrackQuery.marked(4, 0, 0), chunk, c -> {
                throw new IllegalStateException("stop");
            });
        } catch (IllegalStateException expected) {
            // the dump is left running
        }
        assertThat(conntrack.dump(ConntrackQuery.marked(4, 0, 0), new ConntrackEntries(16)))
                .isEqualTo(500);
    }
}
