// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kubeverdict.controlplane.manifests.BadManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoadException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ManifestDirectorySourceTest {
    static final ManifestDirectorySource.Timing QUICK =
            new ManifestDirectorySource.Timing(Duration.ofMillis(20), Duration.ofSeconds(60), Duration.ofMillis(20));

    static String pod(String ns, String name, String app, String ip) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: %s, name: %s, labels: {app: %s}}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: %s}
                """.formatted(ns, name, app, ip);
    }

    static final String NS = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            """;

    static final String POLICY = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: x, name: deny-all}
            spec: {podSelector: {}}
            """;

    static final String POLICY_JSON = """
            {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
             "metadata": {"namespace": "x", "name": "deny-all"}, "spec": {"podSelector": {}}}
            """;

    /** The deny-all policy in the format the file's name asks for. */
    static String policyFor(String file) {
        return file.endsWith(".json") ? POLICY_JSON : POLICY;
    }

    private static ManifestDirectorySource source(
            Path dir, DirectoryReader loader, RecordingSink sink, RecordingListener listener) {
        return new ManifestDirectorySource(dir, loader, sink, QUICK, listener);
    }

    private static DirectoryReader engine() {
        return new EngineDirectoryReader(BadManifests.SMALL_LIMITS);
    }

    @Test
    void initialLoadThenOnlyDifferencesOnChange(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1") + "---\n" + POLICY);
        Files.writeString(dir.resolve("ignored.txt"), "not yaml");
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        try (ManifestDirectorySource src = source(dir, engine(), sink, listener)) {
            src.start();
            assertThat(sink.synced).containsExactly("manifests");
            assertThat(sink.log()).containsExactlyInAnyOrder("ns+x", "pod+x/a", "np+x/deny-all");
            assertThat(listener.loaded).containsExactly(ManifestRevision.read(dir));

            // Relabel a, add b in a new file, drop the policy.
            Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a2", "10.0.0.1"));
            Files.writeString(dir.resolve("b.yaml"), pod("x", "b", "b", "10.0.0.2"));
            await(() -> sink.log().size() >= 6, "three changes");
            assertThat(sink.log().subList(3, sink.log().size()))
                    .containsExactlyInAnyOrder("pod+x/a", "pod+x/b", "np-x/deny-all");
            assertThat(sink.calc.snapshot("n1").getEndpointsList())
                    .anySatisfy(e -> assertThat(e.getEndpoint().getLabelsMap()).containsEntry("app", "a2"));

            Files.delete(dir.resolve("b.yaml"));
            await(() -> sink.log().contains("pod-x/b"), "pod b deleted");
        }
    }

    @Test
    void eachLoadsRevisionFollowsItsChanges(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1"));
        RecordingSink sink = new RecordingSink();
        try (ManifestDirectorySource src = source(dir, engine(), sink, new RecordingListener())) {
            src.start();
            String first = ManifestRevision.read(dir);
            assertThat(sink.revisions).containsExactly(first + "@2");

            Files.writeString(dir.resolve("b.yaml"), pod("x", "b", "b", "10.0.0.2"));
            String second = ManifestRevision.read(dir);
            await(() -> sink.revisions.size() == 2, "the second load's revision");
            // Reported after the load's one change, not before.
            assertThat(sink.revisions).containsExactly(first + "@2", second + "@3");
        }
    }

    /** A bad file at start: nothing delivered, not synced, the error reported; fixing it loads. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#all")
    void aBadFileAtStartPublishesNothingUntilFixed(BadManifests.Case bad, @TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1"));
        Files.write(dir.resolve(bad.file()), bad.content());
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        ManifestDirectorySource src = source(dir, engine(), sink, listener); // driven by hand: no thread
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.REJECTED);
        assertThat(sink.log()).isEmpty();
        assertThat(sink.synced).isEmpty();
        assertThat(sink.revisions).isEmpty();
        assertThat(listener.rejected)
                .singleElement()
                .asString()
                .startsWith("manifest load rejected: " + bad.where())
                .contains(bad.says());

        // Retried without a change: the same bytes are not parsed or reported again.
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.REJECTED);
        assertThat(listener.rejected).hasSize(1);

        Files.delete(dir.resolve(bad.file()));
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.APPLIED);
        assertThat(sink.synced).containsExactly("manifests");
        assertThat(sink.log()).containsExactly("ns+x", "pod+x/a");
        assertThat(listener.loaded).containsExactly(ManifestRevision.read(dir));
    }

    /** A bad file after a good load: nothing changes, the error is reported; fixing it applies the fix only. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#all")
    void aBadFileAfterAGoodLoadKeepsThePreviousState(BadManifests.Case bad, @TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1"));
        Files.writeString(dir.resolve(bad.file()), policyFor(bad.file()));
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        ManifestDirectorySource src = source(dir, engine(), sink, listener);
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.APPLIED);
        String good = ManifestRevision.read(dir);

        // The policy's file goes bad and another file changes in the same load: neither is applied.
        Files.write(dir.resolve(bad.file()), bad.content());
        Files.writeString(dir.resolve("a.yaml"), NS);
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.REJECTED);
        assertThat(sink.log()).containsExactlyInAnyOrder("ns+x", "pod+x/a", "np+x/deny-all");
        assertThat(sink.revisions).containsExactly(good + "@3");
        assertThat(listener.lastRejected())
                .startsWith("manifest load rejected: " + bad.where())
                .contains(bad.says());

        Files.writeString(dir.resolve(bad.file()), policyFor(bad.file()));
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.APPLIED);
        assertThat(sink.log()).containsExactlyInAnyOrder("ns+x", "pod+x/a", "np+x/deny-all", "pod-x/a");
        assertThat(listener.loaded).containsExactly(good, ManifestRevision.read(dir));
    }

    @Test
    void aLoaderThatThrowsAnythingIsAFailedLoadAndTheWatcherCarriesOn(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("x", "a", "a", "10.0.0.1"));
        AtomicInteger calls = new AtomicInteger();
        DirectoryReader sick = files -> {
            switch (calls.incrementAndGet()) {
                case 1 -> throw new StackOverflowError("deep");
                case 2 -> throw new OutOfMemoryError("big");
                case 3 -> throw new IllegalStateException("bug");
                default -> {
                    return engine().load(files);
                }
            }
        };
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        try (ManifestDirectorySource src = source(dir, sick, sink, listener)) {
            src.start(); // the first attempt fails: start still returns, the watcher retries
            await(() -> sink.synced.contains("manifests"), "a load after three failures");
            assertThat(sink.log()).containsExactly("pod+x/a");
            assertThat(listener.rejected)
                    .hasSize(3)
                    .allSatisfy(r -> assertThat(r).startsWith("manifest load failed: "));
            assertThat(listener.died).isEmpty();
            Files.writeString(dir.resolve("b.yaml"), pod("x", "b", "b", "10.0.0.2"));
            await(() -> sink.log().contains("pod+x/b"), "a later update");
        }
    }

    @Test
    void theDirectoryIsWatchedAgainAfterItIsDeletedAndCreatedAgain(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("manifests");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("a.yaml"), pod("x", "a", "a", "10.0.0.1"));
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        try (ManifestDirectorySource src = source(dir, engine(), sink, listener)) {
            src.start();
            assertThat(sink.log()).containsExactly("pod+x/a");

            deleteRecursively(dir);
            await(
                    () -> listener.rejected.stream().anyMatch(r -> r.contains("does not exist")),
                    "the deletion reported");
            assertThat(sink.log()).containsExactly("pod+x/a"); // a missing directory is no empty cluster

            Files.createDirectories(dir);
            Files.writeString(dir.resolve("b.yaml"), pod("x", "b", "b", "10.0.0.2"));
            await(() -> sink.log().contains("pod+x/b"), "the new directory loaded");
            assertThat(sink.log()).containsExactly("pod+x/a", "pod+x/b", "pod-x/a");

            Files.writeString(dir.resolve("c.yaml"), pod("x", "c", "c", "10.0.0.3"));
            await(() -> sink.log().contains("pod+x/c"), "a later update of the new directory");
            assertThat(listener.died).isEmpty();
        }
    }

    @Test
    void aDirectoryThatDoesNotExistYetIsWaitedFor(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("later");
        RecordingSink sink = new RecordingSink();
        RecordingListener listener = new RecordingListener();
        try (ManifestDirectorySource src = source(dir, engine(), sink, listener)) {
            src.start();
            assertThat(listener.rejected).singleElement().asString().contains("does not exist");
            assertThat(sink.synced).isEmpty();
            Path staging = Files.createDirectories(parent.resolve("staging"));
            Files.writeString(staging.resolve("a.yaml"), pod("x", "a", "a", "10.0.0.1"));
            Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
            await(() -> sink.synced.contains("manifests"), "the directory loaded");
            assertThat(sink.log()).containsExactly("pod+x/a");
        }
    }

    @Test
    void aDirectoryQuietForLongerThanTheSettleIntervalLoadsWithoutWaitingIt(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("pods.yaml"), pod("x", "a", "a", "10.0.0.1"));
        FileTime old = FileTime.from(Instant.now().minus(Duration.ofHours(2)));
        Files.setLastModifiedTime(dir.resolve("pods.yaml"), old);
        Files.setLastModifiedTime(dir, old);
        RecordingSink sink = new RecordingSink();
        // Settles for an hour (the files are two hours old): a start that waited for it would time out.
        ManifestDirectorySource.Timing hour =
                new ManifestDirectorySource.Timing(Duration.ofHours(1), Duration.ofHours(2), Duration.ofMillis(50));
        try (ManifestDirectorySource src =
                new ManifestDirectorySource(dir, engine(), sink, hour, new RecordingListener())) {
            assertTimeoutPreemptively(Duration.ofSeconds(60), src::start);
            assertThat(sink.log()).containsExactly("pod+x/a");
            assertThat(sink.synced).contains("manifests");
        }
    }

    @Test
    void aFileWrittenSlowlyInPlaceIsNotLoadedHalfWritten(@TempDir Path dir) throws Exception {
        String both = pod("x", "a", "a", "10.0.0.1") + "---\n" + pod("x", "b", "b", "10.0.0.2");
        Files.writeString(dir.resolve("pods.yaml"), both);
        RecordingSink sink = new RecordingSink();
        // Settles for a second: far longer than the pause between the two writes below.
        ManifestDirectorySource.Timing slow = new ManifestDirectorySource.Timing(
                Duration.ofSeconds(1), Duration.ofSeconds(60), Duration.ofMillis(50));
        try (ManifestDirectorySource src =
                new ManifestDirectorySource(dir, engine(), sink, slow, new RecordingListener())) {
            src.start();
            assertThat(sink.log()).containsExactly("pod+x/a", "pod+x/b");
            String next = pod("x", "a", "a2", "10.0.0.1") + "---\n" + pod("x", "b", "b2", "10.0.0.2");
            int cut = next.indexOf("---"); // the first half alone is a valid file without pod b
            try (OutputStream out = Files.newOutputStream(dir.resolve("pods.yaml"))) { // truncates in place
                out.write(next.substring(0, cut).getBytes());
                out.flush();
                Thread.sleep(100);
                out.write(next.substring(cut).getBytes());
            }
            await(() -> sink.log().size() >= 4, "the rewrite loaded");
            assertThat(sink.log()).containsExactly("pod+x/a", "pod+x/b", "pod+x/a", "pod+x/b");
            assertThat(sink.log()).doesNotContain("pod-x/b");
        }
    }

    @Test
    void anAtomicSwapOfAConfigMapStyleDirectoryIsOneLoad(@TempDir Path dir) throws Exception {
        Path v1 = Files.createDirectories(dir.resolve("..v1"));
        Files.writeString(v1.resolve("pods.yaml"), pod("x", "a", "a", "10.0.0.1"));
        Files.createSymbolicLink(dir.resolve("..data"), v1.getFileName());
        Files.createSymbolicLink(dir.resolve("pods.yaml"), Path.of("..data/pods.yaml"));
        RecordingSink sink = new RecordingSink();
        try (ManifestDirectorySource src = source(dir, engine(), sink, new RecordingListener())) {
            src.start();
            assertThat(sink.log()).containsExactly("pod+x/a");
            // What the kubelet does: write the new version aside, then rename a new link over "..data".
            Path v2 = Files.createDirectories(dir.resolve("..v2"));
            Files.writeString(
                    v2.resolve("pods.yaml"), pod("x", "a", "a", "10.0.0.1") + "---\n" + pod("x", "b", "b", "10.0.0.2"));
            Files.createSymbolicLink(dir.resolve("..data_tmp"), v2.getFileName());
            Files.move(
                    dir.resolve("..data_tmp"),
                    dir.resolve("..data"),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            await(() -> sink.log().contains("pod+x/b"), "the new version");
            assertThat(sink.log()).containsExactly("pod+x/a", "pod+x/b");
        }
    }

    @Test
    void loadErrorsAreManifestLoadExceptionsOfTheLoader(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), "a: [");
        RecordingListener listener = new RecordingListener();
        DirectoryReader loader = files -> {
            try {
                return engine().load(files);
            } catch (ManifestLoadException e) {
                assertThat(e.errors()).singleElement().asString().startsWith("a.yaml:1:");
                throw e;
            }
        };
        ManifestDirectorySource src = source(dir, loader, new RecordingSink(), listener);
        assertThat(src.reload()).isEqualTo(ManifestDirectorySource.Outcome.REJECTED);
        assertThat(listener.rejected).singleElement().asString().startsWith("manifest load rejected: a.yaml:1:");
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
