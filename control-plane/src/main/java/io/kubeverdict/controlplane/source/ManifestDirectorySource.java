// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import io.kubeverdict.controlplane.manifests.ManifestProblem;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A directory of manifests as the cluster, loaded whole, all or nothing: at start and again
 * whenever something in it changes (file events, settled for a moment; a periodic re-read as a
 * safety net for filesystems without events). Each load waits until the directory is quiet (no
 * modification time within the settle interval, or else its {@link DirectoryFingerprint} unchanged
 * across that interval; and unchanged across the read), so a write in progress is not read; it
 * is parsed from the bytes read, diffed against the previous load, and only the differences go to
 * the sink, followed by the load's {@link ManifestRevision}.
 *
 * <p>A load that fails for any reason (a file or document that cannot be read, an unreadable or
 * missing directory, any Throwable from the loader) changes nothing: the previous state stays,
 * the {@link Listener} hears why, and the load is retried on the next change or after a backoff.
 * Nothing is delivered, and the source does not report itself synced, before the first load
 * succeeds. A directory that is deleted and created again (or does not exist yet) is watched
 * again once it exists. The watcher thread ends only when closed; should it die anyway, the
 * listener is told.
 */
public final class ManifestDirectorySource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ManifestDirectorySource.class);
    public static final String NAME = "manifests";

    /** Hears how loads go; called on the loading thread. */
    public interface Listener {
        /** A load was applied: its changes and revision went to the sink. */
        void loaded(String revision);

        /**
         * A load was rejected; nothing of it was applied. {@code error} names file, line and column.
         * Told once per failure: retries that fail the same way are not told again.
         */
        void rejected(String error);

        /** The watcher thread ended by an error it did not handle: the directory is no longer followed. */
        void died(Throwable cause);
    }

    /** How one attempt to load ended. */
    enum Outcome {
        APPLIED,
        UNCHANGED,
        REJECTED,
        BUSY
    }

    /**
     * @param settle how long the directory must stay unchanged before it is read
     * @param poll   re-read period when no event arrives
     * @param retry  first delay before retrying a failed load (doubles up to {@code poll})
     */
    public record Timing(Duration settle, Duration poll, Duration retry) {
        public static final Timing DEFAULT =
                new Timing(Duration.ofMillis(200), Duration.ofSeconds(30), Duration.ofSeconds(1));
    }

    private final Path dir;
    private final DirectoryReader loader;
    private final ClusterEventSink sink;
    private final Timing timing;
    private final Listener listener;
    private final Thread thread;
    private volatile boolean running = true;

    // Loading thread only (start() runs the first load before the thread starts).
    private ManifestSnapshot previous = ManifestSnapshot.EMPTY;
    private boolean synced;
    private String appliedRevision;
    private String rejectedRevision; // content whose load was rejected: not parsed again until it changes
    private String rejectedError;
    private Outcome startOutcome = Outcome.APPLIED;
    private String lastError;
    private List<String> lastProblems = List.of();
    private String lastSkipped = "";
    private WatchService watchService;
    private final Set<WatchKey> keys = new HashSet<>();
    private Object watchedDirKey;

    public ManifestDirectorySource(
            Path dir, DirectoryReader loader, ClusterEventSink sink, Timing timing, Listener listener) {
        this.dir = dir;
        this.loader = loader;
        this.sink = sink;
        this.timing = timing;
        this.listener = listener;
        this.thread = new Thread(this::run, "manifest-watcher");
        this.thread.setDaemon(true);
    }

    /**
     * Watches, tries the first load (synchronously; never throws: a failure is reported and
     * retried), then follows the directory on its own thread.
     */
    public void start() {
        try {
            watchService = FileSystems.getDefault().newWatchService();
        } catch (IOException | RuntimeException e) {
            log.warn("manifests: no file events ({}); re-reading {} every {}", e.toString(), dir, timing.poll());
        }
        // Watch before the first read, so that no change after it can go unnoticed.
        watchIfPresent();
        startOutcome = reload();
        thread.start();
    }

    /** One attempt to load the directory; never throws. */
    Outcome reload() {
        try {
            return attempt();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.BUSY;
        } catch (ManifestLoadException e) {
            for (ManifestProblem p : e.errors()) {
                log.debug("manifests: error: {}", p);
            }
            String error = "manifest load rejected: " + e.getMessage();
            rejectedError = error;
            reject(error, e.errors().stream().map(Object::toString).toList());
            return Outcome.REJECTED;
        } catch (NoSuchFileException e) {
            if (Files.isDirectory(dir)) {
                log.debug("manifests: {} vanished while {} was read; waiting", e.getFile(), dir);
                return Outcome.BUSY; // a file went away mid-read: the directory is being changed
            }
            reject("manifest directory " + dir + " does not exist (or is no directory)", List.of());
            return Outcome.REJECTED;
        } catch (IOException e) {
            reject("manifest directory " + dir + " cannot be read: " + e, List.of());
            return Outcome.REJECTED;
        } catch (Throwable e) { // StackOverflowError, OutOfMemoryError, a loader's bug: still just a failed load
            log.error("manifests: load of {} failed", dir, e);
            reject("manifest load failed: " + e, List.of());
            return Outcome.REJECTED;
        }
    }

    private Outcome attempt() throws IOException, InterruptedException, ManifestLoadException {
        DirectoryFingerprint before = DirectoryFingerprint.of(dir);
        if (!before.quietFor(dir, timing.settle(), Instant.now())) { // written just now: see that it stops
            Thread.sleep(timing.settle().toMillis());
            if (!before.equals(DirectoryFingerprint.of(dir))) {
                log.debug("manifests: {} is being written; waiting", dir);
                return Outcome.BUSY;
            }
        }
        SortedMap<String, byte[]> files = io.kubeverdict.controlplane.manifests.ManifestFiles.read(dir);
        if (!before.equals(DirectoryFingerprint.of(dir))) {
            log.debug("manifests: {} changed while being read; waiting", dir);
            return Outcome.BUSY;
        }
        String revision = ManifestRevision.of(files);
        if (revision.equals(appliedRevision) && lastError == null) {
            return Outcome.UNCHANGED;
        }
        if (revision.equals(rejectedRevision)) {
            reject(rejectedError, List.of()); // the same bytes fail the same way: not parsed again
            return Outcome.REJECTED;
        }
        DirectoryReader.Result result;
        try {
            result = loader.load(files);
        } catch (ManifestLoadException e) {
            rejectedRevision = revision;
            throw e;
        }
        apply(result, revision);
        return Outcome.APPLIED;
    }

    private void apply(DirectoryReader.Result result, String revision) {
        if (!result.problems().equals(lastProblems)) {
            result.problems().forEach(p -> log.warn("manifests: {}", p));
            lastProblems = result.problems();
        }
        if (!result.skipped().equals(lastSkipped)) {
            if (!result.skipped().isEmpty()) {
                log.info("manifests: {}", result.skipped());
            }
            lastSkipped = result.skipped();
        }
        List<String> ignored = new ArrayList<>();
        ManifestSnapshot next = ManifestSnapshot.of(result.objects(), ignored);
        if (!ignored.isEmpty()) {
            log.debug("manifests: ignoring {}", ignored);
        }
        List<ManifestSnapshot.Change> changes = previous.changesTo(next);
        for (ManifestSnapshot.Change c : changes) {
            sink.change(c.kind(), c.object(), c.apply());
        }
        previous = next;
        // The bytes parsed are the bytes hashed: the revision names exactly this load.
        sink.sourceRevision(NAME, revision);
        appliedRevision = revision;
        rejectedRevision = null;
        if (!synced) {
            synced = true;
            sink.sourceSynced(NAME);
        }
        if (lastError != null) {
            log.info("manifests: {} loads again", dir);
            lastError = null;
        }
        if (!changes.isEmpty()) {
            log.info("manifests: {} objects, {} changes", next.size(), changes.size());
        }
        listener.loaded(revision);
    }

    /** Reports a failed load once (until the directory loads again or fails otherwise). */
    private void reject(String error, List<String> details) {
        if (error.equals(lastError)) {
            return;
        }
        log.warn("{}; {}", error, synced ? "keeping the previous state" : "nothing is published until it loads");
        details.stream().skip(1).forEach(d -> log.warn("manifests: also: {}", d));
        lastError = error;
        listener.rejected(error);
    }

    private void run() {
        Throwable cause = null;
        try {
            watch();
        } catch (Throwable e) {
            cause = e;
        } finally {
            if (running) {
                Throwable why = cause != null ? cause : new IllegalStateException("manifest watcher returned");
                log.error("manifest watcher died; {} is no longer followed", dir, why);
                listener.died(why);
            }
        }
    }

    private void watch() {
        long backoff = timing.retry().toMillis();
        Outcome last = startOutcome;
        while (running) {
            try {
                long wait = switch (last) {
                    case BUSY -> timing.settle().toMillis();
                    case REJECTED -> backoff;
                    default -> timing.poll().toMillis();
                };
                awaitChange(wait);
                watchIfPresent();
                last = reload();
                backoff = last == Outcome.REJECTED
                        ? Math.min(backoff * 2, timing.poll().toMillis())
                        : timing.retry().toMillis();
            } catch (InterruptedException | ClosedWatchServiceException e) {
                if (!running) {
                    return;
                }
                Thread.interrupted(); // not closing: carry on
            } catch (Throwable e) {
                log.error("manifest watcher: unexpected failure; carrying on", e);
                last = Outcome.REJECTED;
            }
            if (Thread.currentThread().isInterrupted() && !running) {
                return;
            }
        }
    }

    /** Waits up to {@code millis} for a file event, then until events stop for the settle interval. */
    private void awaitChange(long millis) throws InterruptedException {
        if (watchService == null || keys.isEmpty()) {
            Thread.sleep(millis);
            return;
        }
        WatchKey key = watchService.poll(millis, TimeUnit.MILLISECONDS);
        if (key == null) {
            return;
        }
        drain(key);
        WatchKey more;
        while ((more = watchService.poll(timing.settle().toMillis(), TimeUnit.MILLISECONDS)) != null) {
            drain(more);
        }
    }

    private void drain(WatchKey key) {
        key.pollEvents();
        if (!key.reset()) {
            keys.remove(key); // its directory is gone
        }
    }

    /**
     * Registers the directory and its (non-hidden) subdirectories, again after the directory was
     * deleted and created anew; drops the registrations while it does not exist. Never throws:
     * without events the periodic re-read still follows the directory.
     */
    private void watchIfPresent() {
        if (watchService == null) {
            return;
        }
        try {
            if (!Files.isDirectory(dir)) {
                cancelKeys();
                return;
            }
            Object identity =
                    Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
            if (!Objects.equals(identity, watchedDirKey) || keys.stream().noneMatch(WatchKey::isValid)) {
                cancelKeys();
                watchedDirKey = identity;
            }
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                    if (!d.equals(dir) && d.getFileName().toString().startsWith(".")) {
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    keys.add(d.register(
                            watchService,
                            StandardWatchEventKinds.ENTRY_CREATE,
                            StandardWatchEventKinds.ENTRY_MODIFY,
                            StandardWatchEventKinds.ENTRY_DELETE));
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException | RuntimeException e) {
            log.debug("manifests: cannot watch {} now: {}", dir, e.toString());
        }
    }

    private void cancelKeys() {
        keys.forEach(WatchKey::cancel);
        keys.clear();
        watchedDirKey = null;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
        if (watchService != null) {
            try {
                watchService.close();
            } catch (IOException e) {
                log.debug("closing the watch service", e);
            }
        }
    }
}
