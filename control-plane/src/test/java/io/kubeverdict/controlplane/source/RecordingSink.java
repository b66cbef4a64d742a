// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.service.TestDoubleCalculator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/** A sink that applies changes straight away to a test-double calculator and records their kinds. */
final class RecordingSink implements ClusterEventSink {
    final TestDoubleCalculator calc = new TestDoubleCalculator();
    final List<String> kinds = new CopyOnWriteArrayList<>();
    final List<String> synced = new CopyOnWriteArrayList<>();
    /** Revisions in order, each with how many changes had been applied when it came. */
    final List<String> revisions = new CopyOnWriteArrayList<>();

    @Override
    public synchronized void change(String kind, Consumer<PolicyCalculator> change) {
        kinds.add(kind);
        change.accept(calc);
    }

    @Override
    public void sourceSynced(String source) {
        synced.add(source);
    }

    @Override
    public synchronized void sourceRevision(String source, String revision) {
        revisions.add(revision + "@" + kinds.size());
    }

    synchronized List<String> log() {
        return List.copyOf(calc.log());
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }
}
