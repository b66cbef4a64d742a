package io.kubeverdict.controlplane.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The simulated agents of {@link SyncFanoutBenchmark} in their own JVM process, so that the
 * server's cost is measured without the agents' gRPC/Netty work on the same heap and threads.
 * Arguments: port, agent count. Opens one plaintext Sync stream per agent (node-0 .. node-N-1)
 * and writes to stdout "ready" once all are in sync, then one line "d INDEX" per received delta
 * (flushed at once): the benchmark timestamps each line on receipt, as System.nanoTime is not
 * comparable across processes. Exits when stdin closes.
 */
public final class SyncAgentsProcess {
    private static final PrintStream OUT =
            new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int agents = Integer.parseInt(args[1]);
        CountDownLatch inSync = new CountDownLatch(agents);
        List<RemoteAgent> all = new ArrayList<>(agents);
        for (int i = 0; i < agents; i++) {
            all.add(new RemoteAgent(port, i, inSync));
        }
        inSync.await();
        report("ready");
        while (System.in.read() >= 0) {
            // the benchmark closes stdin when done
        }
        all.forEach(RemoteAgent::close);
        System.exit(0);
    }

    static void report(String line) {
        synchronized (OUT) {
            OUT.print(line);
            OUT.print('\n');
            OUT.flush();
        }
    }

    /** One agent: keeps no state, only reports each delta's arrival. */
    static final class RemoteAgent implements ClientResponseObserver<SyncRequest, ToAgent> {
        private final int index;
        private final ManagedChannel channel;
        private final CountDownLatch inSyncLatch;
        private volatile boolean inSync;
        private volatile boolean closing;
        private ClientCallStreamObserver<SyncRequest> call;

        RemoteAgent(int port, int index, CountDownLatch inSyncLatch) {
            this.index = index;
            this.inSyncLatch = inSyncLatch;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                    .maxInboundMessageSize(8 << 20).build();
            PolicySyncGrpc.newStub(channel).sync(
                    SyncRequest.newBuilder().setNode("node-" + index).setAgentVersion("bench").build(), this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(ToAgent m) {
            if (m.hasInSync()) {
                if (!inSync) {
                    inSync = true;
                    inSyncLatch.countDown();
                }
            } else if (inSync) {
                report("d " + index);
            }
        }

        @Override
        public void onError(Throwable t) {
            if (!closing) {
                System.err.println("node-" + index + ": " + t);
            }
        }

        @Override
        public void onCompleted() {}

        void close() {
            closing = true;
            call.cancel("bench done", null);
            channel.shutdownNow();
        }
    }
}
