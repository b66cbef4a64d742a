// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.receipts.PolicyReceipts;
import io.kubeverdict.controlplane.source.ClusterEventSink;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns the {@link PolicyCalculator}. Sources enqueue changes from any thread;
 * the loop applies a burst of them, then asks the calculator which nodes changed and publishes
 * their new snapshots to the {@link SnapshotHub}. Nothing is published before every source has
 * delivered its initial state (the first full calculation), so no agent ever sees a partial view.
 *
 * <p>A change that throws is not dropped: it is counted and retried with backoff
 * ({@link FailedChanges}) until it applies or a newer change of the same object supersedes it;
 * the first calculation waits for it. A publication that throws keeps its nodes and is retried.
 * An Error ends the thread (the calculator's state can no longer be trusted; see {@link #onDeath}).
 */
public final class CalculationLoop implements ClusterEventSink, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CalculationLoop.class);
    /** Most events applied before publishing, so a flood still publishes now and then. */
    private static final int MAX_BURST = 10_000;

    private static final int SIZE_SAMPLES_PER_BURST = 16;

    private final PolicyCalculator calculator;
    private final SnapshotHub hub;
    private final ControlPlaneMetrics metrics;
    private final Consumer<List<PolicyProblem>> problemsListener;
    private final AddressReports addressReports;
    private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final CompletableFuture<Void> firstCalculation = new CompletableFuture<>();
    // Event thread only: changes that threw, waiting for their retry; and snapshots not yet published.
    private final FailedChanges retries = new FailedChanges();
    private final Set<String> unpublishedNodes = new LinkedHashSet<>();
    /** Sets whose members changed, by id, not yet published (see {@link PolicyCalculator#drainChanges}). */
    private final Map<String, SetChange> unpublishedSets = new TreeMap<>();
    /** Ids of sets dropped, not yet published; the hub drops them before it takes the changes. */
    private final Set<String> unpublishedDrops = new TreeSet<>();

    private long publishRetryAt; // System.nanoTime of the next publication attempt while publishFailures > 0
    private int publishFailures;

    // Event thread only.
    private int sourcesPending;
    private long earliestUnpublished; // unix nanos of the earliest change not yet published
    private List<PolicyProblem> lastProblems = List.of();
    private Set<String> lastClusterNodes;
    private String unpublishedRevision; // the newest source revision whose changes are applied, not yet published
    private long changeSeen; // unix nanos: when the change being applied was seen
    private PolicyReceipts receipts; // set before start(); null: none kept
    private volatile boolean running = true;
    private volatile Consumer<Throwable> onDeath = e -> {};

    /**
     * @param sources how many sources must report {@link #sourceSynced} before the first publication
     * @param problemsListener told (on the event thread) whenever the list of policy problems changes
     */
    public CalculationLoop(
            PolicyCalculator calculator,
            SnapshotHub hub,
            ControlPlaneMetrics metrics,
            int sources,
            Consumer<List<PolicyProblem>> problemsListener) {
        this.calculator = calculator;
        this.hub = hub;
        this.metrics = metrics;
        this.problemsListener = problemsListener;
        this.addressReports = new AddressReports(metrics);
        this.sourcesPending = sources;
        this.thread = new Thread(this::run, "calculation");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /**
     * Told if the event thread dies (an Error from an event: the calculator's state can no longer
     * be trusted, and nothing would be published any more). Set before {@link #start()}.
     */
    public void onDeath(Consumer<Throwable> listener) {
        this.onDeath = listener;
    }

    /**
     * Tells the enforcement receipts each node snapshot as it is published and the end of each
     * publication. Set before {@link #start()}.
     */
    public void keepReceipts(PolicyReceipts receipts) {
        this.receipts = receipts;
    }

    /**
     * When the change being applied was seen (unix nanos; event thread only): a source's delivery,
     * or the retry of a change that failed.
     */
    public long changeSeenUnixNanos() {
        return changeSeen;
    }

    /** Completes once the first full calculation has been published. */
    public CompletableFuture<Void> firstCalculation() {
        return firstCalculation;
    }

    @Override
    public void change(String kind, Consumer<PolicyCalculator> change) {
        change(kind, null, change);
    }

    @Override
    public void change(String kind, String object, Consumer<PolicyCalculator> change) {
        long seen = unixNanos();
        queue.add(() -> {
            if (earliestUnpublished == 0) {
                earliestUnpublished = seen;
            }
            if (object != null && retries.supersede(object)) {
                metrics.eventsRetrying(retries.size());
            }
            changeSeen = seen;
            apply(new FailedChanges.Change(kind, object, change), 0);
        });
    }

    /** Applies a change that failed {@code failures} times before; one that throws is kept for a retry, never dropped. */
    private void apply(FailedChanges.Change c, int failures) {
        try {
            c.change().accept(calculator);
            metrics.eventProcessed(c.kind());
        } catch (RuntimeException e) {
            metrics.eventFailed(c.kind());
            retries.failed(c, failures + 1, e, System.nanoTime());
            metrics.eventsRetrying(retries.size());
        }
    }

    @Override
    public void sourceSynced(String source) {
        queue.add(() -> {
            log.info("source {} delivered its initial state", source);
            sourcesPending--;
        });
    }

    @Override
    public void sourceRevision(String source, String revision) {
        // Queued behind the changes of that revision, so it is applied after them and published
        // by the publish() that follows (see publish()).
        queue.add(() -> unpublishedRevision = revision);
    }

    /** Runs a read-only question on the event thread (e.g. for inspection). */
    public <T> CompletableFuture<T> query(Function<PolicyCalculator, T> question) {
        CompletableFuture<T> f = new CompletableFuture<>();
        queue.add(() -> {
            try {
                f.complete(question.apply(calculator));
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /** The IP sets' definitions in words, asked on the event thread; none (no words) if it is slow. */
    Map<String, String> describeSets(Collection<String> ids) {
        try {
            return query(calc -> calc.describeIpSets(ids)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        } catch (ExecutionException | TimeoutException e) {
            log.warn("could not describe IP sets: {}", e.toString());
            return Map.of();
        }
    }

    private void run() {
        Throwable cause = null;
        try {
            loop();
        } catch (Throwable e) {
            cause = e;
        } finally {
            if (running) {
                Throwable why = cause != null ? cause : new IllegalStateException("calculation loop returned");
                log.error("calculation thread died; nothing is published any more", why);
                onDeath.accept(why);
            }
        }
    }

    private void loop() {
        while (running) {
            Runnable first;
            try {
                first = nextEvent();
            } catch (InterruptedException e) {
                return;
            }
            long start = System.nanoTime();
            int n = 0;
            for (Runnable r = first; r != null; r = ++n < MAX_BURST ? queue.poll() : null) {
                r.run(); // changes catch their own failures (apply); an Error ends the thread (run)
            }
            for (FailedChanges.Waiting due : retries.takeDue(System.nanoTime())) {
                changeSeen = unixNanos();
                apply(due.change(), due.failures());
            }
            metrics.eventsRetrying(retries.size());
            boolean publishDue = publishFailures == 0 || System.nanoTime() - publishRetryAt >= 0;
            // Before the first calculation, nothing is published while a change still fails (fail closed).
            if (sourcesPending <= 0 && publishDue && (firstCalculation.isDone() || retries.isEmpty())) {
                try {
                    publish();
                    publishFailures = 0;
                } catch (RuntimeException e) {
                    publishFailures++;
                    publishRetryAt = System.nanoTime() + FailedChanges.backoffNanos(publishFailures);
                    metrics.eventFailed("publish");
                    log.error(
                            "publishing snapshots failed (attempt {}); {} nodes kept for the retry",
                            publishFailures,
                            unpublishedNodes.size(),
                            e);
                }
                metrics.calculationTook(System.nanoTime() - start);
            }
        }
    }

    /** The next event, or null once a retry (of a change or a publication) is due. */
    private Runnable nextEvent() throws InterruptedException {
        long now = System.nanoTime();
        long wait = retries.nanosUntilNext(now);
        if (publishFailures > 0) {
            long untilPublish = Math.max(0, publishRetryAt - now);
            wait = wait < 0 ? untilPublish : Math.min(wait, untilPublish);
        }
        return wait < 0 ? queue.take() : queue.poll(wait, TimeUnit.NANOSECONDS);
    }

    private void publish() {
        // Kept until published: a publication that throws leaves them for its retry.
        PolicyCalculator.Changes changes = calculator.drainChanges();
        unpublishedNodes.addAll(changes.nodes());
        // A drop ends the set's earlier changes; a change after it is a new set of the same id.
        changes.droppedSets().forEach(id -> {
            unpublishedSets.remove(id);
            unpublishedDrops.add(id);
        });
        changes.sets().forEach(set -> unpublishedSets.merge(set.id(), set, SetChange::then));
        Set<String> changed = Set.copyOf(unpublishedNodes);
        long eventTime = earliestUnpublished;
        long building = 0;
        int sampled = 0;
        List<NodeSnapshot> built = new ArrayList<>(changed.size());
        for (String node : changed) {
            long t = System.nanoTime();
            NodeSnapshot s = calculator.publishableSnapshot(node);
            building += System.nanoTime() - t;
            // Sizing a snapshot walks all of it: a sample per burst is enough for the distribution.
            if (sampled++ < SIZE_SAMPLES_PER_BURST) {
                metrics.snapshotPublished(s.getSerializedSize(), s.getEndpointsCount());
            }
            built.add(s);
        }
        // One batch: the changed nodes' snapshots and, once for every node listing them, the sets.
        hub.publish(built, List.copyOf(unpublishedSets.values()), List.copyOf(unpublishedDrops), eventTime);
        if (receipts != null) {
            for (NodeSnapshot s : built) {
                receipts.nodePublished(
                        s.getNode(), hub.current(s.getNode()).version(), s.getPoliciesList(), unixNanos());
            }
            receipts.publicationDone(unixNanos());
        }
        unpublishedNodes.removeAll(changed);
        unpublishedSets.clear();
        unpublishedDrops.clear();
        earliestUnpublished = 0;
        if (!changed.isEmpty()) {
            metrics.snapshotsBuilt(changed.size(), building);
        }
        Set<String> clusterNodes = calculator.clusterNodes();
        if (clusterNodes != lastClusterNodes) {
            lastClusterNodes = clusterNodes;
            hub.publishClusterNodes(clusterNodes);
        }
        if (unpublishedRevision != null) {
            // After the snapshots: whoever sees the revision finds them published.
            hub.publishSourceRevision(unpublishedRevision);
            unpublishedRevision = null;
        }
        List<PolicyProblem> problems = calculator.problems();
        if (!problems.equals(lastProblems)) {
            lastProblems = List.copyOf(problems);
            metrics.problems(problems.size());
            Map<String, Integer> byPolicy = new TreeMap<>();
            problems.forEach(pp -> byPolicy.merge(pp.namespace() + "/" + pp.name(), 1, Integer::sum));
            metrics.problemsByPolicy(byPolicy);
            problemsListener.accept(lastProblems);
        }
        addressReports.conflicts(calculator.addressConflicts());
        addressReports.refused(calculator.refusedAddresses());
        if (!firstCalculation.isDone()) {
            hub.markReady();
            firstCalculation.complete(null);
            log.info(
                    "first full calculation published: {} nodes",
                    calculator.nodes().size());
        }
    }

    static long unixNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
    }
}
