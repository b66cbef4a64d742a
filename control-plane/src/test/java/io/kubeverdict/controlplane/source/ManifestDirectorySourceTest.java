package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

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
}
