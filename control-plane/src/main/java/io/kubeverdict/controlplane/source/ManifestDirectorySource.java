package io.kubeverdict.controlplane.source;

import io.kubeverdict.sync.ManifestRevision;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A directory of manifests as the cluster: loaded whole at start and again whenever something in
 * it changes (file events, settled for a moment, with a slow periodic re-read as a safety net for
 * filesystems without events). Each reload is diffed against the previous one and only the
 * differences go to the sink, so a reload that changes nothing publishes nothing.
 */
public final class ManifestDirectorySource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ManifestDirectorySource.class);
    public static final String NAME = "manifests";

    private final Path dir;
    private final ManifestLoader loader;
    private final ClusterEventSink sink;
    private final Duration settle;
    private final Duration poll;
    private final Thread thread;
    private volatile boolean running = true;
    private ManifestSnapshot previous = ManifestSnapshot.EMPTY; // watcher thread only
    private List<String> lastProblems = List.of();
    private String lastRevision; // watcher thread only
    private WatchService watchService;

    public ManifestDirectorySource(Path dir, ManifestLoader loader, ClusterEventSink sink, Duration settle, Duration poll) {
        this.dir = dir;
        this.loader = loader;
        this.sink = sink;
        this.settle = settle;
        this.poll = poll;
        this.thread = new Thread(this::watch, "manifest-watcher");
        this.thread.setDaemon(true);
    }

    /** Loads the directory once (synchronously), reports the source synced, then watches. */
    public void start() throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("not a directory: " + dir);
        }
        // Watch before the first read, so that no change after it can go unnoticed.
        watchService = FileSystems.getDefault().newWatchService();
        register(watchService);
        reload();
        sink.sourceSynced(NAME);
        thread.start();
    }

    /**
     * Reads the directory and sends the differences to the previous load, then the load's revision
     * (only when the files hashed the same before and after it, so that the revision names exactly
     * what was loaded; a write during the load triggers another reload anyway).
     */
    void reload() {
        ManifestLoader.Result result;
        String revisionBefore;
        String revisionAfter;
        try {
            revisionBefore = ManifestRevision.read(dir);
            result = loader.load(dir);
            revisionAfter = ManifestRevision.read(dir);
        } catch (IOException | RuntimeException e) {
            // Keep the last good state: a half-written file must not wipe the cluster.
            log.warn("could not load {}: {}; keeping the previous state", dir, e.toString());
            return;
        }
        if (!result.problems().equals(lastProblems)) {
            result.problems().forEach(p -> log.warn("manifests: {}", p));
            lastProblems = result.problems();
        }
        List<String> ignored = new ArrayList<>();
        ManifestSnapshot next = ManifestSnapshot.of(result.objects(), ignored);
        if (!ignored.isEmpty()) {
            log.debug("manifests: ignoring {}", ignored);
        }
        List<ManifestSnapshot.Change> changes = previous.changesTo(next);
        for (ManifestSnapshot.Change c : changes) {
            sink.change(c.kind(), c.apply());
        }
        if (!changes.isEmpty()) {
            log.info("manifests: {} objects, {} changes", next.size(), changes.size());
        }
        previous = next;
        if (!revisionBefore.equals(revisionAfter)) {
            log.debug("manifests: files changed while loading; the next reload reports a revision");
        } else if (!revisionAfter.equals(lastRevision)) {
            sink.sourceRevision(NAME, revisionAfter);
            lastRevision = revisionAfter;
        }
    }

    private void watch() {
        try (WatchService ws = watchService) {
            while (running) {
                WatchKey key = ws.poll(poll.toMillis(), TimeUnit.MILLISECONDS);
                if (key != null) {
                    // Let an editor or a `kubectl`-style multi-file write settle, then take it all.
                    drain(key);
                    WatchKey more;
                    while ((more = ws.poll(settle.toMillis(), TimeUnit.MILLISECONDS)) != null) {
                        drain(more);
                    }
                    register(ws); // new subdirectories
                }
                reload();
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.error("manifest watcher failed; {} is no longer watched", dir, e);
        }
    }

    private static void drain(WatchKey key) {
        key.pollEvents();
        key.reset();
    }

    private void register(WatchService ws) throws IOException {
        try (Stream<Path> dirs = Files.walk(dir)) {
            for (Path d : (Iterable<Path>) dirs.filter(Files::isDirectory)::iterator) {
                d.register(ws, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                        StandardWatchEventKinds.ENTRY_DELETE);
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
    }
}
