package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.sync.ManifestRevision;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestDirectorySourceTest {
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

    @Test
    void initialLoadThenOnlyDifferencesOnChange(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1") + "---\n" + POLICY);
        Files.writeString(dir.resolve("ignored.txt"), "not yaml");
        RecordingSink sink = new RecordingSink();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, new YamlDirectoryLoader(), sink,
                Duration.ofMillis(50), Duration.ofSeconds(60))) {
            src.start();
            assertThat(sink.synced).containsExactly("manifests");
            assertThat(sink.log()).containsExactlyInAnyOrder("ns+x", "pod+x/a", "np+x/deny-all");

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
    void unreadableReloadKeepsPreviousState(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("x", "a", "a", "10.0.0.1"));
        RecordingSink sink = new RecordingSink();
        int[] calls = {0};
        ManifestLoader flaky = d -> {
            if (calls[0]++ == 1) {
                throw new java.io.IOException("half-written");
            }
            return new YamlDirectoryLoader().load(d);
        };
        ManifestDirectorySource src = new ManifestDirectorySource(dir, flaky, sink, Duration.ofMillis(10),
                Duration.ofSeconds(60));
        src.start();
        src.reload(); // fails: nothing deleted
        assertThat(sink.log()).containsExactly("pod+x/a");
        src.reload(); // same content: nothing to send
        assertThat(sink.log()).containsExactly("pod+x/a");
        src.close();
    }

    @Test
    void eachLoadsRevisionFollowsItsChanges(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NS + "---\n" + pod("x", "a", "a", "10.0.0.1"));
        RecordingSink sink = new RecordingSink();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, new YamlDirectoryLoader(), sink,
                Duration.ofMillis(50), Duration.ofSeconds(60))) {
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

    @Test
    void failedLoadOrFilesChangedDuringTheLoadReportNoRevision(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("x", "a", "a", "10.0.0.1"));
        RecordingSink sink = new RecordingSink();
        int[] calls = {0};
        ManifestLoader racing = d -> {
            int call = calls[0]++;
            if (call == 1) {
                Files.writeString(dir.resolve("a.yaml"), pod("x", "a", "changed", "10.0.0.1"));
                throw new java.io.IOException("half-written");
            }
            ManifestLoader.Result r = new YamlDirectoryLoader().load(d);
            if (call == 2) {
                // Written after this load read it: the revision of this load is unknown.
                Files.writeString(dir.resolve("b.yaml"), pod("x", "b", "b", "10.0.0.2"));
            }
            return r;
        };
        ManifestDirectorySource src = new ManifestDirectorySource(dir, racing, sink, Duration.ofMillis(10),
                Duration.ofSeconds(60));
        try {
            // Reloads driven by hand (no watcher thread, whose reloads the writes would trigger).
            src.reload();
            assertThat(sink.revisions).hasSize(1);
            src.reload(); // fails
            assertThat(sink.revisions).hasSize(1);
            src.reload(); // loads, but b.yaml appears meanwhile
            assertThat(sink.revisions).hasSize(1);
            src.reload(); // a quiet load of both files
            assertThat(sink.revisions).last().isEqualTo(ManifestRevision.read(dir) + "@" + sink.kinds.size());
            assertThat(sink.log()).contains("pod+x/b");
        } finally {
            src.close();
        }
    }
}
