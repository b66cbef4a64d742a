// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static io.kubeverdict.agent.testing.Messages.addMembers;
import static io.kubeverdict.agent.testing.Messages.allowIngressFrom;
import static io.kubeverdict.agent.testing.Messages.boundary;
import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static io.kubeverdict.agent.testing.Messages.removeEndpoint;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sync client against a scripted control plane on a real loopback socket. */
class SyncClientTest {
    private static final Backoff FAST = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), 2.0);

    private ScriptedControlPlane cp;
    private ManagedChannel channel;
    private SyncClient client;
    private final BlockingQueue<Enforced> enforced = new LinkedBlockingQueue<>();
    private volatile boolean failNextEnforce;

    record Enforced(NodeSnapshot snapshot, long sequence) {
        List<String> pods() {
            List<String> pods = new ArrayList<>();
            for (Endpoint e : snapshot.getEndpointsList()) {
                pods.add(e.getId().getNamespace() + "/" + e.getId().getPod());
            }
            return pods;
        }
    }

    @BeforeEach
    void start() throws Exception {
        cp = new ScriptedControlPlane();
        channel = NettyChannelBuilder.forTarget(cp.target()).usePlaintext().build();
        client = newClient(FAST);
    }

    private SyncClient newClient(Backoff backoff) {
        Enforcer recorder = (snapshot, sequence) -> {
            if (failNextEnforce) {
                failNextEnforce = false;
                throw new IllegalStateException("kernel said no");
            }
            enforced.add(new Enforced(snapshot, sequence));
        };
        return new SyncClient(
                channel,
                SyncRequest.newBuilder().setNode("node-1").build(),
                () -> new SnapshotAssembler("node-1"),
                recorder,
                new AppliedReporter(channel, "node-1", "test"),
                backoff,
                () -> 0.5,
                new SyncStatus());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cp.close();
    }

    @Test
    void appliesNothingBeforeInSyncThenTheWholeSnapshotAtOnce() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        assertThat(stream.request.getNode()).isEqualTo("node-1");

        stream.send(
                ipSet(1, "s1", "10.0.0.9"),
                allowIngressFrom(2, "x/allow", "s1"),
                endpoint(3, "x", "a", "10.0.0.1", "x/allow"),
                endpoint(4, "x", "b", "10.0.0.2"));
        await(() -> client.status().receivedSequence() == 4);
        assertThat(enforced.poll(300, TimeUnit.MILLISECONDS))
                .as("applied before InSync")
                .isNull();
        assertThat(client.status().inSync()).isFalse();

        stream.send(inSync(5));
        Enforced first = next();
        assertThat(first.sequence()).isEqualTo(5);
        assertThat(first.pods()).containsExactly("x/a", "x/b");
        assertThat(first.snapshot().getIpSetsCount()).isEqualTo(1);
        await(() -> client.status().inSync());
        assertThat(client.status().appliedSequence()).isEqualTo(5);
        assertThat(cp.awaitReport(5).getNode()).isEqualTo("node-1");
    }

    @Test
    void anIdleAgentSendsHeartbeatsThatClaimNoSequence() throws Exception {
        client.close();
        try (AppliedReporter reporter = new AppliedReporter(channel, "node-1", "test", Duration.ofMillis(100))) {
            client = new SyncClient(
                    channel,
                    SyncRequest.newBuilder().setNode("node-1").build(),
                    () -> new SnapshotAssembler("node-1"),
                    (snapshot, sequence) -> enforced.add(new Enforced(snapshot, sequence)),
                    reporter,
                    FAST,
                    () -> 0.5,
                    new SyncStatus());
            client.start();
            ScriptedControlPlane.Stream stream = cp.nextStream();
            stream.send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
            assertThat(next().sequence()).isEqualTo(2);
            assertThat(cp.awaitReport(2).getHeartbeat()).isFalse();
            // Nothing changes from here on: the agent still speaks up, without a sequence.
            for (int i = 0; i < 2; i++) {
                AppliedReport beat = cp.nextReport();
                assertThat(beat.getHeartbeat()).isTrue();
                assertThat(beat.getAppliedSequence()).isZero();
                assertThat(beat.getNode()).isEqualTo("node-1");
            }
            // A change is still reported as such.
            stream.send(endpoint(3, "x", "b", "10.0.0.2"));
            assertThat(next().sequence()).isEqualTo(3);
            assertThat(cp.awaitReport(3).getHeartbeat()).isFalse();
        }
    }

    @Test
    void heartbeatsStopWithTheirChannel() throws Exception {
        ManagedChannel own =
                NettyChannelBuilder.forTarget(cp.target()).usePlaintext().build();
        AppliedReporter reporter = new AppliedReporter(own, "node-1", "test", Duration.ofMillis(100));
        assertThat(cp.nextReport().getHeartbeat()).isTrue();
        assertThat(reporter.beating()).isTrue();
        own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        await(() -> !reporter.beating());
    }

    @Test
    void appliesEachDeltaAfterInSyncAndReportsIt() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        stream.send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
        assertThat(next().pods()).containsExactly("x/a");

        stream.send(endpoint(3, "x", "b", "10.0.0.2"));
        Enforced added = next();
        assertThat(added.sequence()).isEqualTo(3);
        assertThat(added.pods()).containsExactly("x/a", "x/b");

        stream.send(removeEndpoint(4, "x", "a"));
        Enforced removed = next();
        assertThat(removed.sequence()).isEqualTo(4);
        assertThat(removed.pods()).containsExactly("x/b");
        cp.awaitReport(4);
    }

    @Test
    void reconnectBuildsTheNewStateAsideAndSwapsAtInSync() throws Exception {
        client.start();
        ScriptedControlPlane.Stream first = cp.nextStream();
        first.send(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "old", "10.0.0.3"), inSync(3));
        assertThat(next().pods()).containsExactly("x/a", "x/old");

        first.fail(Status.UNAVAILABLE.withDescription("control plane restarting"));
        ScriptedControlPlane.Stream second = cp.nextStream();
        await(() -> client.status().reconnects() >= 1);
        assertThat(client.status().inSync()).isFalse();
        // The new stream's snapshot arrives; until its InSync nothing changes.
        second.send(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "new", "10.0.0.4"));
        await(() -> client.status().receivedSequence() == 2 && client.status().connected());
        assertThat(enforced.poll(300, TimeUnit.MILLISECONDS))
                .as("half a snapshot applied")
                .isNull();
        assertThat(client.status().appliedSequence()).isEqualTo(3);

        second.send(inSync(3));
        Enforced swapped = next();
        assertThat(swapped.pods()).as("fresh state, nothing carried over").containsExactly("x/a", "x/new");
        assertThat(swapped.sequence()).isEqualTo(3);
    }

    @Test
    void aResumedStreamContinuesFromTheEnforcedStateAndEndsWhereAFullResyncDoes() throws Exception {
        Synced first = startInSync(
                ipSet(1, "s1", "10.0.0.9"),
                allowIngressFrom(2, "x/allow", "s1"),
                endpoint(3, "x", "a", "10.0.0.1", "x/allow"),
                boundary(4));
        Enforced before = first.enforced();

        ScriptedControlPlane.Stream resumed = restart(first.stream(), before.snapshot());
        resumed.send(resumedInSync(1));
        Enforced same = next();
        assertThat(same.snapshot()).as("the enforced state, nothing sent").isEqualTo(before.snapshot());
        assertThat(same.sequence()).isEqualTo(1);
        // Deltas of the resumed stream apply to that state.
        resumed.send(addMembers(2, "s1", "10.0.0.8"), endpoint(3, "x", "b", "10.0.0.2"), boundary(4));
        Enforced after = next();
        assertThat(after.pods()).containsExactly("x/a", "x/b");

        // A full resync of the same cluster ends in exactly that state.
        ScriptedControlPlane.Stream full = restart(resumed, after.snapshot());
        full.send(
                ipSet(1, "s1", "10.0.0.8", "10.0.0.9"),
                allowIngressFrom(2, "x/allow", "s1"),
                endpoint(3, "x", "b", "10.0.0.2"),
                endpoint(4, "x", "a", "10.0.0.1", "x/allow"),
                boundary(5));
        assertThat(next().snapshot()).isEqualTo(after.snapshot());
    }

    @Test
    void aStreamThatDoesNotResumeStartsFromNothingAndAResumeNobodyOfferedResyncs() throws Exception {
        Synced first = startInSync(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "old", "10.0.0.3"), boundary(3));

        // The control plane's state is another (the digest did not match): the full snapshot, nothing carried over.
        ScriptedControlPlane.Stream second =
                restart(first.stream(), first.enforced().snapshot());
        second.send(endpoint(1, "x", "a", "10.0.0.1"), boundary(2));
        assertThat(next().pods()).containsExactly("x/a");

        // A resumed InSync after the stream's first message is a broken stream: resync, nothing enforced.
        second.send(resumedInSync(3));
        ScriptedControlPlane.Stream third = cp.nextStream();
        assertThat(enforced).isEmpty();
        third.send(endpoint(1, "x", "c", "10.0.0.5"), boundary(2));
        assertThat(next().pods()).containsExactly("x/c");
    }

    @Test
    void aFailedApplyOffersNoStateToResumeFrom() throws Exception {
        Synced first = startInSync(endpoint(1, "x", "a", "10.0.0.1"), boundary(2));
        failNextEnforce = true;
        first.stream().send(endpoint(3, "x", "b", "10.0.0.2"), boundary(4));
        // The kernel's state is not known after a failed apply.
        ScriptedControlPlane.Stream second = nextStreamOffering(null);
        // And a resumed InSync then answers no offer: resync.
        second.send(resumedInSync(1));
        ScriptedControlPlane.Stream third = cp.nextStream();
        assertThat(enforced).isEmpty();
        third.send(endpoint(1, "x", "a", "10.0.0.1"), boundary(2));
        assertThat(next().pods()).containsExactly("x/a");
    }

    @Test
    void theStateLoadedAtStartIsOfferedUntilAStreamEnforcesOneOfItsOwn() throws Exception {
        SnapshotAssembler previousRun = new SnapshotAssembler("node-1");
        previousRun.apply(endpoint(1, "x", "a", "10.0.0.1"));
        NodeSnapshot loaded = previousRun.snapshot();
        client.resumingFrom(() -> loaded);
        client.start();
        ScriptedControlPlane.Stream first = nextStreamOffering(loaded);
        // Not the control plane's state: the full snapshot replaces it, and later streams offer that.
        first.send(endpoint(1, "x", "b", "10.0.0.2"), boundary(2));
        Enforced own = next();
        assertThat(own.pods()).containsExactly("x/b");
        ScriptedControlPlane.Stream second = restart(first, own.snapshot());
        second.send(resumedInSync(1));
        assertThat(next().snapshot()).isEqualTo(own.snapshot());
    }

    @Test
    void aLoadThatGivesNothingOrFailsOffersNothing() throws Exception {
        client.resumingFrom(() -> {
            throw new IllegalStateException("disk gone");
        });
        client.start();
        nextStreamOffering(null).send(endpoint(1, "x", "a", "10.0.0.1"), boundary(2));
        assertThat(next().pods()).containsExactly("x/a");
    }

    /** A stream brought in sync, and the state it enforced. */
    private record Synced(ScriptedControlPlane.Stream stream, Enforced enforced) {}

    /** Starts the client and brings its first stream (which offers nothing) in sync with these messages. */
    private Synced startInSync(ToAgent... messages) throws InterruptedException {
        client.start();
        ScriptedControlPlane.Stream first = nextStreamOffering(null);
        first.send(messages);
        return new Synced(first, next());
    }

    /** Breaks {@code stream} as a restarting control plane does; the agent's next stream offers {@code offered}. */
    private ScriptedControlPlane.Stream restart(ScriptedControlPlane.Stream stream, NodeSnapshot offered)
            throws InterruptedException {
        stream.fail(Status.UNAVAILABLE.withDescription("control plane restarting"));
        return nextStreamOffering(offered);
    }

    /** The agent's next stream, whose request offers the digest of {@code offered} (null: no digest). */
    private ScriptedControlPlane.Stream nextStreamOffering(NodeSnapshot offered) throws InterruptedException {
        ScriptedControlPlane.Stream stream = cp.nextStream();
        assertThat(stream.request.getResumeDigest())
                .as("the digest offered to resume from")
                .isEqualTo(offered == null ? ByteString.EMPTY : SnapshotDigest.of(offered));
        return stream;
    }

    private static ToAgent resumedInSync(long seq) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setInSync(InSync.newBuilder().setChangeBoundaries(true).setResumed(true))
                .build();
    }

    @Test
    void aSequenceGapAbandonsTheStreamAndResyncs() throws Exception {
        client.start();
        ScriptedControlPlane.Stream first = cp.nextStream();
        first.send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
        next();
        first.send(endpoint(4, "x", "b", "10.0.0.2")); // 3 is missing

        ScriptedControlPlane.Stream second = cp.nextStream();
        await(first::cancelled);
        assertThat(client.status().resyncs()).isEqualTo(1);
        assertThat(enforced.poll(200, TimeUnit.MILLISECONDS))
                .as("the message after the gap")
                .isNull();

        second.send(endpoint(1, "x", "b", "10.0.0.2"), inSync(2));
        assertThat(next().pods()).containsExactly("x/b");
    }

    @Test
    void aMessageThatDoesNotFitResyncs() throws Exception {
        client.start();
        ScriptedControlPlane.Stream first = cp.nextStream();
        first.send(
                endpoint(1, "x", "a", "10.0.0.1"),
                ToAgent.newBuilder()
                        .setSequence(2)
                        .setIpSetDeltaUpdate(IpSetDeltaUpdate.newBuilder()
                                .setId("never-sent")
                                .addAddedMembers("10.0.0.9"))
                        .build());
        ScriptedControlPlane.Stream second = cp.nextStream();
        assertThat(client.status().resyncs()).isEqualTo(1);
        second.send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
        assertThat(next().pods()).containsExactly("x/a");
        assertThat(first.cancelled()).isTrue();
    }

    @Test
    void aFailedApplyKeepsTheOldStateAndResyncs() throws Exception {
        client.start();
        ScriptedControlPlane.Stream first = cp.nextStream();
        first.send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
        next();
        failNextEnforce = true;
        first.send(endpoint(3, "x", "b", "10.0.0.2"));

        ScriptedControlPlane.Stream second = cp.nextStream();
        assertThat(client.status().applyFailures()).isEqualTo(1);
        assertThat(client.status().appliedSequence()).isEqualTo(2);
        second.send(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "b", "10.0.0.2"), inSync(3));
        assertThat(next().pods()).containsExactly("x/a", "x/b");
    }

    @Test
    void burstsAfterInSyncAreAppliedTogetherAndNothingIsLost() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        stream.send(inSync(1));
        assertThat(next().pods()).isEmpty();
        int n = 500;
        for (int i = 0; i < n; i++) {
            stream.send(endpoint(2 + i, "x", "p" + i, "10.1." + (i / 250) + "." + (i % 250)));
        }
        long last = 1 + n;
        Enforced latest;
        int generations = 0;
        do {
            latest = next();
            generations++;
        } while (latest.sequence() < last);
        assertThat(latest.sequence()).isEqualTo(last);
        assertThat(latest.pods()).hasSize(n);
        assertThat(generations).isBetween(1, n);
    }

    /** The members of set {@code id} in an enforced snapshot (empty when it has no such set). */
    private static List<String> members(Enforced e, String id) {
        return e.snapshot().getIpSetsList().stream()
                .filter(s -> s.getId().equals(id))
                .findFirst()
                .map(s -> List.copyOf(s.getMembersList()))
                .orElse(List.of());
    }

    // Audit M1: a large set replaced as IpSetUpdate(first chunk) + IpSetDeltaUpdate(rest) must not
    // be enforced as its first chunk alone (it would cut connections allowed before and after).
    @Test
    void withChangeBoundariesAPartlyArrivedChangeIsNeverEnforced() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        stream.send(
                ipSet(1, "s", "10.0.0.1", "10.0.0.2", "10.0.0.3"),
                allowIngressFrom(2, "x/allow", "s"),
                endpoint(3, "x", "a", "10.9.0.1", "x/allow"),
                boundary(4));
        assertThat(next().sequence()).isEqualTo(4);

        stream.send(ipSet(5, "s", "10.0.0.1")); // the first chunk of the replacement
        await(() -> client.status().receivedSequence() == 5);
        assertThat(enforced.poll(300, TimeUnit.MILLISECONDS))
                .as("the first chunk alone enforced")
                .isNull();
        assertThat(client.status().appliedSequence()).isEqualTo(4);

        stream.send(addMembers(6, "s", "10.0.0.2", "10.0.0.3", "10.0.0.4"), boundary(7));
        Enforced whole = next();
        assertThat(whole.sequence()).isEqualTo(7);
        assertThat(members(whole, "s")).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
        cp.awaitReport(7);
        assertThat(enforced.poll(300, TimeUnit.MILLISECONDS))
                .as("enforced again")
                .isNull();
    }

    @Test
    void aBurstThatEndsInsideAChangeEnforcesOnlyUpToItsLastBoundary() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        stream.send(ipSet(1, "s"), boundary(2));
        assertThat(next().sequence()).isEqualTo(2);

        // One write: however the agent's bursts cut it, only the states at 4 and 7 are complete.
        stream.send(
                addMembers(3, "s", "10.0.0.1"),
                boundary(4),
                addMembers(5, "s", "10.0.0.2"),
                addMembers(6, "s", "10.0.0.3"),
                boundary(7));
        Enforced e;
        do {
            e = next();
            assertThat(e.sequence()).as("enforced at a boundary").isIn(4L, 7L);
            if (e.sequence() == 4) {
                assertThat(members(e, "s")).containsExactly("10.0.0.1");
            }
        } while (e.sequence() < 7);
        assertThat(members(e, "s")).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");
    }

    @Test
    void withChangeBoundariesAStreamThatBreaksInsideAChangeLeavesTheLastCompleteStateEnforced() throws Exception {
        client.start();
        ScriptedControlPlane.Stream first = cp.nextStream();
        first.send(ipSet(1, "s", "10.0.0.1", "10.0.0.2"), boundary(2));
        assertThat(members(next(), "s")).containsExactly("10.0.0.1", "10.0.0.2");

        first.send(ipSet(3, "s", "10.0.0.1"));
        await(() -> client.status().receivedSequence() == 3);
        first.fail(Status.UNAVAILABLE.withDescription("control plane killed between chunks"));
        ScriptedControlPlane.Stream second = cp.nextStream();
        await(() -> client.status().reconnects() >= 1);
        assertThat(enforced).as("the partial set enforced").isEmpty();
        assertThat(client.status().appliedSequence()).isEqualTo(2);

        second.send(ipSet(1, "s", "10.0.0.1", "10.0.0.5"), boundary(2));
        assertThat(members(next(), "s")).containsExactly("10.0.0.1", "10.0.0.5");
    }

    // Version skew: a control plane that does not announce boundaries (its InSync has no
    // change_boundaries) never sends them, so the agent enforces every burst as it always did.
    @Test
    void withoutAnnouncedBoundariesEachBurstIsEnforcedAsBefore() throws Exception {
        client.start();
        ScriptedControlPlane.Stream stream = cp.nextStream();
        stream.send(ipSet(1, "s", "10.0.0.1", "10.0.0.2"), inSync(2));
        assertThat(next().sequence()).isEqualTo(2);

        stream.send(ipSet(3, "s", "10.0.0.1"));
        Enforced partial = next();
        assertThat(partial.sequence()).isEqualTo(3);
        assertThat(members(partial, "s")).containsExactly("10.0.0.1");
        cp.awaitReport(3);
    }

    @Test
    void reconnectsWithGrowingBackoffWhileTheControlPlaneRefuses() throws Exception {
        client.start();
        List<Long> openedAt = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ScriptedControlPlane.Stream s = cp.nextStream();
            openedAt.add(System.nanoTime());
            s.fail(Status.UNAVAILABLE);
        }
        // FAST with the random number fixed at 0.5: 25, 50, 100 ms between attempts; lower bounds only.
        assertThat(TimeUnit.NANOSECONDS.toMillis(openedAt.get(1) - openedAt.get(0)))
                .isGreaterThanOrEqualTo(25);
        assertThat(TimeUnit.NANOSECONDS.toMillis(openedAt.get(2) - openedAt.get(1)))
                .isGreaterThanOrEqualTo(50);
        assertThat(TimeUnit.NANOSECONDS.toMillis(openedAt.get(3) - openedAt.get(2)))
                .isGreaterThanOrEqualTo(100);
        assertThat(client.status().reconnects()).isGreaterThanOrEqualTo(3);
        assertThat(enforced).isEmpty();
    }

    @Test
    void keepsTheLastStateWhileTheControlPlaneIsGoneAndResumesWhenItReturns() throws Exception {
        int port = cp.port();
        client.start();
        cp.nextStream().send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
        assertThat(next().sequence()).isEqualTo(2);

        cp.close();
        await(() -> !client.status().connected() && client.status().reconnects() >= 2);
        assertThat(enforced).as("nothing withdrawn while away").isEmpty();
        assertThat(client.status().appliedSequence()).isEqualTo(2);

        cp = new ScriptedControlPlane(port);
        cp.nextStream().send(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "c", "10.0.0.5"), inSync(3));
        assertThat(next().pods()).containsExactly("x/a", "x/c");
    }

    @Test
    void withTheProductionChannelAndBackoffAnOutageEndsInTheNewState() throws Exception {
        // As the agent runs: ControlPlaneChannel's channel, the default backoff, real jitter.
        ManagedChannel production = ControlPlaneChannel.open(cp.target(), null);
        SyncStatus status = new SyncStatus();
        List<Long> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (SyncClient agent = new SyncClient(
                        production,
                        SyncRequest.newBuilder().setNode("node-1").build(),
                        () -> new SnapshotAssembler("node-1"),
                        (snapshot, seq) -> enforced.add(new Enforced(snapshot, seq)),
                        (seq, t) -> reported.add(seq),
                        Backoff.DEFAULT,
                        () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble(),
                        status)
                .start()) {
            int port = cp.port();
            cp.nextStream().send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
            assertThat(next().pods()).containsExactly("x/a");

            cp.close();
            // Away long enough for several refused dials (the channel's own backoff would be seconds by now).
            await(() -> status.reconnects() >= 5);
            assertThat(status.connected()).isFalse();
            assertThat(enforced).as("nothing withdrawn while away").isEmpty();

            cp = new ScriptedControlPlane(port);
            ScriptedControlPlane.Stream back = cp.nextStream();
            back.send(endpoint(1, "x", "a", "10.0.0.1"), endpoint(2, "x", "new", "10.0.0.7"), inSync(3));
            Enforced after = next();
            assertThat(after.pods()).containsExactly("x/a", "x/new");
            await(status::inSync);
            assertThat(reported).contains(2L, 3L);
        } finally {
            production.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void whileNothingAnswersTheAgentDialsOnTheShortBackoffAndOpensNoStream() throws Exception {
        // A stream that ended waits long (1 s, then 2 s, 4 s ...); a dial that found nothing 10 ms:
        // the control plane's return is found on the short one.
        client.close();
        ManagedChannel production = ControlPlaneChannel.open(cp.target(), null);
        SyncStatus status = new SyncStatus();
        try (SyncClient agent = new SyncClient(
                        production,
                        SyncRequest.newBuilder().setNode("node-1").build(),
                        () -> new SnapshotAssembler("node-1"),
                        (snapshot, seq) -> enforced.add(new Enforced(snapshot, seq)),
                        (seq, t) -> {},
                        new Backoff(Duration.ofSeconds(2), Duration.ofMinutes(1), 2.0),
                        new Backoff(Duration.ofMillis(10), Duration.ofMillis(20), 2.0),
                        () -> 0.5,
                        status)
                .start()) {
            int port = cp.port();
            cp.nextStream().send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
            assertThat(next().pods()).containsExactly("x/a");

            cp.close();
            // One wait of 1 s after the broken stream, then dials 5-10 ms apart: 20 within 10 s.
            await(() -> status.reconnects() >= 20);
            assertThat(enforced).as("nothing withdrawn while away").isEmpty();

            cp = new ScriptedControlPlane(port);
            ScriptedControlPlane.Stream back = cp.nextStream();
            assertThat(back.request.getNode()).isEqualTo("node-1");
            back.send(endpoint(1, "x", "b", "10.0.0.2"), inSync(2));
            assertThat(next().pods()).containsExactly("x/b");
        } finally {
            production.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private Enforced next() throws InterruptedException {
        Enforced e = enforced.poll(10, TimeUnit.SECONDS);
        assertThat(e).as("an applied state within 10 s").isNotNull();
        return e;
    }

    static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 10 s");
            }
            Thread.sleep(10);
        }
    }
}
