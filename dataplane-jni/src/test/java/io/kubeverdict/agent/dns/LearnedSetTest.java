// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** H5: one name per address, bounded per set and per node with eviction, readers that take no lock. */
class LearnedSetTest {
    static final long S = 1_000_000_000L;

    static int learn(LearnedSet set, long address, long expires, String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        return set.learn(4, 0, address, expires, n, 0, n.length);
    }

    @Test
    void aMillionDistinctNamesForOneAddressKeepOneName() {
        LearnedSet set = new LearnedSet(4096);
        for (int i = 0; i < 1_000_000; i++) {
            learn(set, 0xC000_0201L, (i + 1) * S, "r" + i + ".attacker.test");
        }
        assertThat(set.size()).isOne();
        assertThat(set.nameBytesHeld()).isEqualTo("r999999.attacker.test".length());
        assertThat(set.nameOf(4, 0, 0xC000_0201L, 0)).isEqualTo("r999999.attacker.test");
    }

    @Test
    void aMillionDistinctAddressesAndNamesStayWithinTheLimitEvictingTheOldestExpiring() {
        LearnedSet set = new LearnedSet(4096);
        for (int i = 0; i < 1_000_000; i++) {
            learn(set, 0x0A00_0000L + i, (i + 1) * S, "r" + i + ".attacker.test");
        }
        // evictions come 1/16 of the set (256) at a time
        assertThat(set.size()).isBetween(4096 - 255, 4096);
        assertThat(set.evicted()).isEqualTo(1_000_000 - set.size());
        assertThat(set.nameBytesHeld()).isLessThanOrEqualTo(4096L * "r999999.attacker.test".length());
        assertThat(set.contains(4, 0, 0x0A00_0000L + 999_999, 0)).isTrue();
        assertThat(set.contains(4, 0, 0x0A00_0000L + 1_000_000 - 4096 + 256, 0))
                .as("among the newest: kept")
                .isTrue();
        assertThat(set.contains(4, 0, 0x0A00_0000L + 1_000_000 - 4097, 0))
                .as("evicted")
                .isFalse();
    }

    @Test
    void aNewAddressEvictsTheOldestExpiringOneAndAKnownOneIsRefreshedInPlace() {
        LearnedSet set = new LearnedSet(3);
        learn(set, 1, 50 * S, "a.test");
        learn(set, 2, 10 * S, "b.test");
        learn(set, 3, 30 * S, "c.test");
        assertThat(learn(set, 3, 40 * S, "c2.test")).isZero();
        assertThat(set.nameOf(4, 0, 3, 0)).as("the later answer's name").isEqualTo("c2.test");
        assertThat(learn(set, 4, 20 * S, "d.test")).isOne();
        assertThat(set.contains(4, 0, 2, 0)).as("expired first: evicted").isFalse();
        assertThat(set.contains(4, 0, 1, 0)).isTrue();
        assertThat(set.contains(4, 0, 4, 0)).isTrue();
        assertThat(set.evicted()).isOne();
        assertThat(set.size()).isEqualTo(3);
    }

    @Test
    void theNodeLimitHoldsOverEverySetAndAnEmptySetThenLearnsNothing() {
        LearnedSet.Budget node = new LearnedSet.Budget(5);
        LearnedSet a = new LearnedSet(100, node);
        LearnedSet b = new LearnedSet(100, node);
        for (int i = 0; i < 5; i++) {
            assertThat(learn(a, i + 1, (i + 10) * S, "a.test")).isOne();
        }
        assertThat(learn(b, 100, 60 * S, "b.test"))
                .as("b is empty and the node full")
                .isEqualTo(-1);
        assertThat(learn(a, 6, 60 * S, "a.test")).as("a evicts its own oldest").isOne();
        assertThat(a.size()).isEqualTo(5);
        assertThat(node.used()).isEqualTo(5);
        assertThat(node.evictions()).isOne();
        assertThat(node.rejections()).isOne();
        a.sweep(12 * S); // 1 was evicted, 2 and 3 (11, 12 s) expire; 4, 5 (13, 14 s) and 6 stay
        assertThat(a.size()).isEqualTo(3);
        assertThat(node.used()).isEqualTo(3);
        assertThat(learn(b, 100, 60 * S, "b.test")).isOne();
    }

    @Test
    void namesWithControlBytesAreEscapedForOperators() {
        LearnedSet set = new LearnedSet(4);
        byte[] name = "\u001b]0;pwned\u0007.x\\.test".getBytes(StandardCharsets.ISO_8859_1);
        set.learn(4, 0, 1, 10 * S, name, 0, name.length);
        assertThat(set.nameOf(4, 0, 1, 0)).isEqualTo("\\027]0;pwned\\007.x\\092.test");
        assertThat(set.entries(0).get(0).name()).isEqualTo("\\027]0;pwned\\007.x\\092.test");
    }

    @Test
    void theVerdictThreadsQuestionTakesNoLockTheWriterCouldHold() throws Exception {
        LearnedSet set = new LearnedSet(4);
        learn(set, 7, 10 * S, "a.test");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            threads.submit(() -> {
                synchronized (set) { // what the DNS thread held while it learned, before the fix
                    held.countDown();
                    release.await();
                }
                return null;
            });
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            Future<Boolean> asked = threads.submit(() -> set.contains(4, 0, 7, 0));
            assertThat(asked.get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            release.countDown();
            threads.shutdownNow();
        }
    }

    @Test
    void aReaderNeverMissesAStableAddressWhileTheWriterInsertsEvictsAndSweeps() throws Exception {
        LearnedSet set = new LearnedSet(64);
        AtomicLong now = new AtomicLong(0);
        learn(set, 0xFFFF, Long.MAX_VALUE / 2, "stable.test");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong misses = new AtomicLong();
        AtomicLong asked = new AtomicLong();
        Thread reader = new Thread(() -> {
            while (!stop.get()) {
                if (!set.contains(4, 0, 0xFFFF, now.get())) {
                    misses.incrementAndGet();
                }
                asked.incrementAndGet();
            }
        });
        reader.start();
        try {
            for (int i = 0; i < 300_000 || asked.get() < 100_000; i++) {
                learn(set, i, now.get() + (1 + i % 7) * S, "churn.test");
                if (i % 50 == 0) {
                    now.addAndGet(S);
                    set.sweep(now.get());
                }
            }
        } finally {
            stop.set(true);
            reader.join(10_000);
        }
        assertThat(misses.get())
                .as("misses of the stable address in %d questions", asked.get())
                .isZero();
        assertThat(set.size()).isLessThanOrEqualTo(64);
    }
}
