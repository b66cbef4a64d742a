// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.kubeverdict.jni.Netns;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Netty event loops whose threads live in a network namespace: sockets a gRPC server binds or a
 * channel connects on them belong to that namespace, so a test's in-JVM control plane or
 * inspection client can talk to an agent process inside a node namespace over its loopback.
 */
public final class NetnsEventLoops {
    private NetnsEventLoops() {}

    public static EventLoopGroup group(String netnsPath, int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(
                    () -> {
                        Netns.enterCurrentThread(netnsPath);
                        r.run();
                    },
                    "netns-loop-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        return new NioEventLoopGroup(threads, factory);
    }
}
