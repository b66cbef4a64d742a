// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.mockapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kubeverdict.testing.tier.MockApiTest;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The mock API server the control-plane tests share: watches that close while events are being
 * sent to them (an informer closed right after a change) stall neither other requests nor the
 * server's shutdown. With fabric8's own dispatcher this test stalls in the first rounds.
 */
@MockKubernetes
@MockApiTest
class MockKubernetesTest {
    private static final int ROUNDS = 30;

    KubernetesMockServer server;
    KubernetesClient client;

    @Test
    void watchesClosedWhileEventsAreSentStallNeitherRequestsNorShutdown() throws Exception {
        client.pods().inNamespace("x").resource(pod(0)).create();
        AtomicBoolean writing = new AtomicBoolean(true);
        Thread writer = new Thread(
                () -> {
                    // Bounded: at most a few thousand edits, ended by the test.
                    for (int i = 1; writing.get() && i < 20_000; i++) {
                        client.pods().inNamespace("x").resource(pod(i)).update();
                    }
                },
                "pod-writer");
        writer.start();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                CountDownLatch seen = new CountDownLatch(3);
                Watch watch = client.pods().inNamespace("x").watch(new CountingWatcher(seen));
                assertThat(seen.await(60, TimeUnit.SECONDS))
                        .as("events of round %d", round)
                        .isTrue();
                watch.close();
                // A stalled event loop leaves this request waiting until the client gives up.
                assertThat(client.pods().inNamespace("x").withName("a").get())
                        .as("round %d", round)
                        .isNotNull();
            }
        } finally {
            writing.set(false);
            writer.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertThat(writer.isAlive()).isFalse();
    }

    private static Pod pod(int generation) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("a")
                .addToLabels("generation", Integer.toString(generation))
                .endMetadata()
                .build();
    }

    private record CountingWatcher(CountDownLatch seen) implements Watcher<Pod> {
        @Override
        public void eventReceived(Action action, Pod pod) {
            seen.countDown();
        }

        @Override
        public void onClose(WatcherException cause) {}
    }
}
