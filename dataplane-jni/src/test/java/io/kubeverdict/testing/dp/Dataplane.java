// SPDX-License-Identifier: Apache-2.0
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
    private final List<NfQueue> queues = new java.util.ArrayList<>();
    private final List<VerdictLoop> loops = new java.util.ArrayList<>();

    private Dataplane(NetnsThread nodeThread, Nftables nft, NftManager manager, boolean leftoverReplaced) {
        this.nodeThread = nodeThread;
        this.nft = nft;
        this.manager = manager;
        this.leftoverReplaced = leftoverReplaced;
    }

    /** Programs the table only (no listener yet). */
    public static Dataplane table(
            TestNamespace node, QueuePath path, int queueNumber, boolean failOpen, List<String> pods) throws Exception {
        return table(node, path, null, queueNumber, failOpen, pods);
    }

    /** Programs the table only, in the given layout (null: the manager's default). */
    public static Dataplane table(
            TestNamespace node,
            QueuePath path,
            TableLayout layout,
            int queueNumber,
            boolean failOpen,
            List<String> pods)
            throws Exception {
        return table(node, path, layout, queueNumber, 1, failOpen, pods);
    }

    /** Programs the table only, spreading over {@code queues} queues from {@code queueNumber} on. */
    public static Dataplane table(
            TestNamespace node,
            QueuePath path,
            TableLayout layout,
            int queueNumber,
            int queues,
            boolean failOpen,
            List<String> pods)
            throws Exception {
        NetnsThread thread = new NetnsThread(node.path());
        try {
            return thread.call(() -> {
                Nftables nft = new Nftables();
                NftManager manager = NftManager.create(
                        nft,
                        TABLE,
                        queueNumber,
                        queues,
                        failOpen,
                        path,
                        layout,
                        io.kubeverdict.agent.nft.CutAction.DROP);
                boolean leftover = manager.start(PodAddresses.of(pods));
                return new Dataplane(thread, nft, manager, leftover);
            });
        } catch (Exception e) {
            thread.close();
            throw e;
        }
    }

    /** Programs the table with a verdict cache whose current tag is {@code cacheMark} (one queue, cut connections dropped). */
    public static Dataplane cached(
            TestNamespace node,
            QueuePath path,
            int queueNumber,
            List<String> pods,
            io.kubeverdict.agent.nft.CacheSettings cache,
            int cacheMark)
            throws Exception {
        NetnsThread thread = new NetnsThread(node.path());
        try {
            return thread.call(() -> {
                        Nftables nft = new Nftables();
                        NftManager manager = NftManager.create(
                                nft,
                                TABLE,
                                queueNumber,
                                1,
                                false,
                                path,
                                null,
                                io.kubeverdict.agent.nft.CutAction.DROP,
                                cache);
                        boolean leftover = manager.start(PodAddresses.of(pods), cacheMark);
                        return new Dataplane(thread, nft, manager, leftover);
                    })
                    .withHeartbeat();
        } catch (Exception e) {
            thread.close();
            throw e;
        }
    }

    private io.kubeverdict.agent.nft.CacheHeartbeat heartbeat;

    /** Renews the cache's liveness as a running agent does, until {@link #stopHeartbeat} or close. */
    private Dataplane withHeartbeat() {
        heartbeat = new io.kubeverdict.agent.nft.CacheHeartbeat(() -> {
            try {
                nodeThread.call(() -> {
                    manager.renewCacheLiveness();
                    return null;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        return this;
    }

    /** Stops renewing the cache's liveness, as a killed agent does. */
    public void stopHeartbeat() throws InterruptedException {
        if (heartbeat != null) {
            heartbeat.close();
            heartbeat = null;
        }
    }

    /** A new generation's kernel change: the pods, an emptied cache, tag {@code cacheMark}. */
    public void update(List<String> pods, int cacheMark) throws Exception {
        nodeThread.call(() -> {
            manager.update(PodAddresses.of(pods), cacheMark);
            return null;
        });
    }

    public io.kubeverdict.agent.nft.CacheCounters cacheCounters() throws Exception {
        return nodeThread.call(manager::cacheCounters);
    }

    /** The cache's counted keys, read as the agent's reader does (a context of its own, in the node). */
    public List<io.kubeverdict.agent.nft.CachedFlows.Flow> cachedFlows() throws Exception {
        return nodeThread.call(() -> {
            try (io.kubeverdict.jni.Nftables nft = new io.kubeverdict.jni.Nftables()) {
                return io.kubeverdict.agent.nft.CachedFlows.read(nft, manager.config());
            }
        });
    }

    /** Binds the queue(s) in the node and starts a verdict loop on each, all with one observer. */
    public Dataplane listen(Judge judge, VerdictObserver observer, boolean defaultAllow) throws Exception {
        List<VerdictObserver> observers = new java.util.ArrayList<>();
        for (int i = 0; i < manager.config().queues(); i++) {
            observers.add(observer);
        }
        return listen(judge, observers, defaultAllow);
    }

    /** Binds every queue in the node and starts a verdict loop on each, observed by observers[i]. */
    public Dataplane listen(Judge judge, List<? extends VerdictObserver> observers, boolean defaultAllow)
            throws Exception {
        int flags = NfQueue.FLAG_GSO | (manager.config().failOpen() ? NfQueue.FLAG_FAIL_OPEN : 0);
        for (int i = 0; i < manager.config().queues(); i++) {
            int number = manager.config().queueNumber() + i;
            NfQueue q = nodeThread.call(() -> new NfQueue(number, flags));
            queues.add(q);
            q.receiveBuffer(4 << 20);
            loops.add(new VerdictLoop(q, 64, judge, observers.get(i), defaultAllow));
        }
        queue = queues.get(0);
        loop = loops.get(0);
        return this;
    }

    public List<VerdictLoop> loops() {
        return loops;
    }

    public List<NfQueue> queues() {
        return queues;
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
        for (VerdictLoop l : loops) {
            l.close();
        }
        loops.clear();
        loop = null;
        for (NfQueue q : queues) {
            q.close();
        }
        queues.clear();
        queue = null;
    }

    /** Lets go of everything but leaves the table in the kernel, like an agent that crashed. */
    public void abandon() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stopHeartbeat();
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
            stopHeartbeat();
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
