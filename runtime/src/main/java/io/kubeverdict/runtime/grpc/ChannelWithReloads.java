// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.concurrent.TimeUnit;

/** A channel whose TLS files are re-read until it is shut down. */
final class ChannelWithReloads extends ManagedChannel {
    private final ManagedChannel channel;
    private final TlsFileReloads reloads;

    ChannelWithReloads(ManagedChannel channel, TlsFileReloads reloads) {
        this.channel = channel;
        this.reloads = reloads;
    }

    @Override
    public ManagedChannel shutdown() {
        reloads.close();
        channel.shutdown();
        return this;
    }

    @Override
    public ManagedChannel shutdownNow() {
        reloads.close();
        channel.shutdownNow();
        return this;
    }

    @Override
    public boolean isShutdown() {
        return channel.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return channel.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return channel.awaitTermination(timeout, unit);
    }

    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return channel.getState(requestConnection);
    }

    @Override
    public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
        channel.notifyWhenStateChanged(source, callback);
    }

    @Override
    public void resetConnectBackoff() {
        channel.resetConnectBackoff();
    }

    @Override
    public void enterIdle() {
        channel.enterIdle();
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return channel.newCall(method, options);
    }

    @Override
    public String authority() {
        return channel.authority();
    }
}
