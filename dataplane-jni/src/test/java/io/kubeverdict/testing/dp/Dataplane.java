package io.kubeverdict.testing.dp;

import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.TableLayout;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.agent.verdict.VerdictLoop;
import io.kubeverdict.agent.verdict.VerdictObserver;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.testing.TestNamespace;
import java.util.List;

/**
 * Our table + queue + verdict loop in a testbed's node namespace, as the agent wires them, for
 * kernel tests. The table selects both pods of the bed unless told otherwise.
 */
public final class Dataplane implements AutoCloseable {
    public static final String TABLE = "kube_verdict";
    public static final List<String> BOTH_PODS =
            List.of(DpTestbed.CLIENT4, DpTestbed.SERVER4, DpTestbed.CLIENT6, DpTestbed.SERVER6);

    public final NetnsThread nodeThread;
    public final Nftables nft;
    public final NftManager manager;
    public final boolean leftoverReplaced;
    private boolean closed;
    private NfQueue queue;
    private VerdictLoop loop;

    private Dataplane(NetnsThread nodeThread, Nftables nft, NftManager manager, boolean leftoverReplaced) {
        this.nodeThread = nodeThread;
        this.nft = nft;
        this.manager = manager;
        this.leftoverReplaced = leftoverReplaced;
    }

    /** Programs the table only (no listener yet). */
    public static Dataplane table(TestNamespace node, QueuePath path, int queueNumber, boolean failOpen, List<String> pods)
            throws Exception {
        return table(node, path, null, queueNumber, failOpen, pods);
    }

    /** Programs the table only, in the given layout (null: the manager's default). */
    public static Dataplane table(TestNamespace node, QueuePath path, TableLayout layout, int queueNumber, boolean failOpen,
                                  List<String> pods) throws Exception {
        NetnsThread thread = new NetnsThread(node.path());
        try {
            return thread.call(() -> {
                Nftables nft = new Nftables();
                NftManager manager = NftManager.create(nft, TABLE, queueNumber, failOpen, path, layout);
                boolean leftover = manager.start(PodAddresses.of(pods));
                return new Dataplane(thread, nft, manager, leftover);
            });
        } catch (Exception e) {
            thread.close();
            throw e;
        }
    }

    /** Binds the queue in the node and starts a verdict loop on it. */
    public Dataplane listen(Judge judge, VerdictObserver observer, boolean defaultAllow) throws Exception {
        int flags = NfQueue.FLAG_GSO | (manager.config().failOpen() ? NfQueue.FLAG_FAIL_OPEN : 0);
        queue = nodeThread.call(() -> new NfQueue(manager.config().queueNumber(), flags));
        queue.receiveBuffer(4 << 20);
        loop = new VerdictLoop(queue, 64, judge, observer, defaultAllow);
        return this;
    }

    public VerdictLoop loop() {
        return loop;
    }

    public NfQueue queue() {
        return queue;
    }

    public void update(List<String> pods) throws Exception {
        nodeThread.call(() -> {
            manager.update(PodAddresses.of(pods));
            return null;
        });
    }

    public String listing() throws Exception {
        return nodeThread.call(manager::listTable);
    }

    /** Stops listening (the table stays), like an agent that died. */
    public void stopListening() throws Exception {
        if (loop != null) {
            loop.close();
            loop = null;
        }
        if (queue != null) {
            queue.close();
            queue = null;
        }
    }

    /** Lets go of everything but leaves the table in the kernel, like an agent that crashed. */
    public void abandon() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stopListening();
            nodeThread.call(() -> {
                nft.close();
                return null;
            });
        } finally {
            nodeThread.close();
        }
    }

    @Override
    public void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stopListening();
            nodeThread.call(() -> {
                manager.remove();
                nft.close();
                return null;
            });
        } finally {
            nodeThread.close();
        }
    }
}
