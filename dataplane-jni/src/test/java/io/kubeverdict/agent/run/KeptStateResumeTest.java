// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.boundary;
import static io.kubeverdict.agent.testing.Messages.endpointUpdate;
import static io.kubeverdict.agent.testing.Messages.policyUpdate;
import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.agent.persist.StateFile;
import io.kubeverdict.agent.persist.StateFileFormat;
import io.kubeverdict.agent.persist.StateWriter;
import io.kubeverdict.agent.sync.Backoff;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.agent.sync.SyncClient;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.PersistedNodeState;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent restarted with its state file (the real writer and reader) and the real sync client, on
 * a loopback socket to a control plane that answers as the real one does (a resumed InSync when
 * the node's snapshot has the offered digest, else the full snapshot): the kept state is offered,
 * resumed, and equals what a full resync gives; a file that may not be trusted is never offered.
 */
class KeptStateResumeTest {
    private static final String NODE = "node-1";
    private static final long DAY = TimeUnit.DAYS.toMillis(1);
    private static final Backoff FAST = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400), 2.0);

    /** The control plane's snapshot of the node, in its own order (members, ranges unsorted). */
    private static final NodeSnapshot CLUSTER = NodeSnapshot.newBuilder()
            .setNode(NODE)
            .addIpSets(ipSet("s2", "10.0.0.7", "10.0.0.3"))
            .addIpSets(ipSet("s1", "10.0.0.9", "10.0.0.2", "10.0.0.1"))
            .addPolicies(allowIngressFrom("x/allow-b", "s2"))
            .addPolicies(allowIngressFrom("x/allow-a", "s1", "s2"))
            .addEndpoints(podEndpoint("x", "b", "10.0.0.2", "x/allow-b"))
            .addEndpoints(podEndpoint("x", "a", "10.0.0.1", "x/allow-a"))
            .addPodCidrs("fd00:1::/64")
            .addPodCidrs("10.244.1.0/24")
            .build();

    @TempDir
    Path dir;

    private ScriptedControlPlane cp;
    private ManagedChannel channel;
    private final List<SyncClient> clients = new ArrayList<>();
    private final BlockingQueue<NodeSnapshot> enforced = new LinkedBlockingQueue<>();

    @BeforeEach
    void start() throws Exception {
        cp = new ScriptedControlPlane();
        channel = NettyChannelBuilder.forTarget(cp.target()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(SyncClient::close);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cp.close();
    }

    @Test
    void aRestartedAgentResumesFromItsStateFileAndHoldsWhatAFullResyncGives() throws Exception {
        StateFile file = new StateFile(dir, NODE);
        // The previous run: a full snapshot, enforced and kept on disk behind enforcement.
        try (StateWriter writer = new StateWriter(file, NODE, "test", Clock.systemUTC(), 1_000_000L).start()) {
            SyncClient previous = client(null, writer);
            ScriptedControlPlane.Stream stream = cp.nextStream();
            assertThat(stream.request.getResumeDigest()).as("nothing kept yet").isEmpty();
            answer(stream);
            next();
            previous.close(); // the agent stops; the writer's close writes what was offered last
        }

        KeptState.Loaded loaded = KeptState.load(file, NODE, System.currentTimeMillis(), DAY);
        assertThat(loaded.report()).isNull();
        assertThat(loaded.resumable()).isNotNull();
        client(loaded, null);
        ScriptedControlPlane.Stream restarted = cp.nextStream();
        assertThat(restarted.request.getResumeDigest()).isEqualTo(SnapshotDigest.of(CLUSTER));
        assertThat(answer(restarted)).as("resumed: nothing but the InSync sent").isEqualTo(1);
        NodeSnapshot resumed = next();
        assertThat(resumed).isEqualTo(fullResync());

        // The same client resynced in full (a control plane that no longer matches) ends in the same state.
        restarted.fail(Status.UNAVAILABLE.withDescription("control plane restarting"));
        ScriptedControlPlane.Stream full = cp.nextStream();
        sendFullSnapshot(full);
        assertThat(next()).isEqualTo(resumed);
    }

    @Test
    void aStaleCorruptForeignOrOtherFormatFileIsNeverOffered() throws Exception {
        long now = System.currentTimeMillis();
        NodeSnapshot kept = fullResync(); // what an agent of this release kept: it would resume if offered
        PersistedNodeState state = PersistedNodeState.newBuilder()
                .setNode(NODE)
                .setSequence(9)
                .setWrittenUnixMillis(now)
                .setAgentVersion("test")
                .setSnapshot(kept)
                .build();
        byte[] intact = StateFileFormat.encode(state);
        byte[] corrupt = intact.clone();
        corrupt[corrupt.length - 3] ^= 1;
        byte[] olderFormat = intact.clone();
        ByteBuffer.wrap(olderFormat).putInt(8, StateFileFormat.VERSION - 1); // the version after the magic
        byte[] stale = StateFileFormat.encode(
                state.toBuilder().setWrittenUnixMillis(now - 2 * DAY).build());
        byte[] foreign = StateFileFormat.encode(state.toBuilder()
                .setNode("node-2")
                .setSnapshot(kept.toBuilder().setNode("node-2"))
                .build());
        record Case(String name, byte[] bytes, String reason) {}
        List<Case> cases = List.of(
                new Case("corrupt", corrupt, "checksum does not match"),
                new Case("older format", olderFormat, "format version this agent does not read"),
                new Case("stale", stale, "older than the maximum age"),
                new Case("foreign", foreign, "written for another node"));

        StateFile file = new StateFile(dir, NODE);
        Files.write(file.path(), intact);
        assertThat(KeptState.load(file, NODE, now, DAY).resumable())
                .as("the intact file is offered: the cases below differ from it only as named")
                .isEqualTo(kept);
        for (Case c : cases) {
            Files.write(file.path(), c.bytes());
            KeptState.Loaded loaded = KeptState.load(file, NODE, now, DAY);
            assertThat(loaded.resumable()).as(c.name()).isNull();
            assertThat(loaded.report()).as(c.name()).contains(file.path().toString(), c.reason());
        }
        // And the sync client given such a load offers nothing: the control plane sends the full snapshot.
        client(KeptState.load(file, NODE, now, DAY), null);
        ScriptedControlPlane.Stream stream = cp.nextStream();
        assertThat(stream.request.getResumeDigest()).isEmpty();
        assertThat(answer(stream)).isGreaterThan(1);
        assertThat(next()).isEqualTo(kept);
    }

    /**
     * An IPv4-mapped address as an older agent kept it (before its assembler wrote them as IPv4):
     * the control plane's digest matches that file, yet a full resync enforces the address as IPv4.
     * The file is enforced at boot as before, but not offered.
     */
    @Test
    void aStateRenderedOtherwiseIsEnforcedAtBootButNotOffered() throws Exception {
        NodeSnapshot cluster = CLUSTER.toBuilder()
                .addEndpoints(podEndpoint("x", "c", "::ffff:10.0.0.5"))
                .build();
        NodeSnapshot keptByOlderAgent = fullResync().toBuilder()
                .addEndpoints(podEndpoint("x", "c", "::ffff:10.0.0.5"))
                .build();
        assertThat(SnapshotDigest.matches(cluster, SnapshotDigest.of(keptByOlderAgent)))
                .as("the digest alone would resume it")
                .isTrue();
        StateFile file = new StateFile(dir, NODE);
        long now = System.currentTimeMillis();
        file.write(PersistedNodeState.newBuilder()
                .setNode(NODE)
                .setSequence(4)
                .setWrittenUnixMillis(now)
                .setAgentVersion("0.0.9")
                .setSnapshot(keptByOlderAgent)
                .build());

        KeptState.Loaded loaded = KeptState.load(file, NODE, now, DAY);
        assertThat(loaded.decoded().usable()).as("enforced at boot").isTrue();
        assertThat(loaded.resumable()).isNull();
        assertThat(loaded.report()).contains(file.path().toString(), "endpoints", "0.0.9");
        assertThat(SnapshotAssembler.rendering(cluster)).isNotEqualTo(keptByOlderAgent);
    }

    /** The real sync client, offering {@code loaded}'s state; its enforcer records and, given a writer, keeps. */
    private SyncClient client(KeptState.Loaded loaded, StateWriter writer) {
        SyncClient client = new SyncClient(
                channel,
                SyncRequest.newBuilder().setNode(NODE).build(),
                () -> new SnapshotAssembler(NODE),
                (snapshot, sequence) -> {
                    enforced.add(snapshot);
                    if (writer != null) {
                        writer.offer(snapshot, sequence);
                    }
                },
                (sequence, eventTime) -> {},
                FAST,
                () -> 0.5,
                new SyncStatus());
        if (loaded != null) {
            client.resumingFrom(loaded::resumable);
        }
        clients.add(client);
        return client.start();
    }

    /** Answers a stream as the control plane does; returns how many messages it sent. */
    private static int answer(ScriptedControlPlane.Stream stream) {
        if (SnapshotDigest.matches(CLUSTER, stream.request.getResumeDigest())) {
            stream.send(ToAgent.newBuilder()
                    .setSequence(1)
                    .setInSync(InSync.newBuilder().setChangeBoundaries(true).setResumed(true))
                    .build());
            return 1;
        }
        return sendFullSnapshot(stream);
    }

    /** The node's whole state in the control plane's order, then the InSync; returns the message count. */
    private static int sendFullSnapshot(ScriptedControlPlane.Stream stream) {
        List<ToAgent> messages = fullSnapshotMessages();
        stream.send(messages.toArray(ToAgent[]::new));
        return messages.size();
    }

    private static List<ToAgent> fullSnapshotMessages() {
        List<ToAgent> messages = new ArrayList<>();
        for (IpSet set : CLUSTER.getIpSetsList()) {
            messages.add(ToAgent.newBuilder()
                    .setSequence(messages.size() + 1)
                    .setIpSetUpdate(IpSetUpdate.newBuilder()
                            .setId(set.getId())
                            .setType(set.getType())
                            .addAllMembers(set.getMembersList()))
                    .build());
        }
        for (ActivePolicy policy : CLUSTER.getPoliciesList()) {
            messages.add(policyUpdate(messages.size() + 1, policy));
        }
        for (Endpoint endpoint : CLUSTER.getEndpointsList()) {
            messages.add(endpointUpdate(messages.size() + 1, endpoint));
        }
        messages.add(ToAgent.newBuilder()
                .setSequence(messages.size() + 1)
                .setNodeUpdate(NodeUpdate.newBuilder().addAllPodCidrs(CLUSTER.getPodCidrsList()))
                .build());
        messages.add(boundary(messages.size() + 1));
        return messages;
    }

    /** What a fresh assembler holds after the full snapshot: a full resync's state. */
    private static NodeSnapshot fullResync() throws Exception {
        SnapshotAssembler assembler = new SnapshotAssembler(NODE);
        for (ToAgent message : fullSnapshotMessages()) {
            assembler.apply(message);
        }
        return assembler.snapshot();
    }

    private NodeSnapshot next() throws InterruptedException {
        NodeSnapshot e = enforced.poll(10, TimeUnit.SECONDS);
        assertThat(e).as("an enforced state within 10 s").isNotNull();
        return e;
    }
}
