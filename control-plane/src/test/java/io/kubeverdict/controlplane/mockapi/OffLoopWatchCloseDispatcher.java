// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.mockapi;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.CustomResourceAware;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.Resetable;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.fabric8.zjsonpatch.JsonPatchException;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * fabric8's mixed (CRUD plus expectations) dispatcher, with every WebSocket listener's close and
 * failure callbacks moved off the Vert.x event loop.
 *
 * <p>Why: fabric8 8.0.0's watch listener waits (up to a minute) in {@code onClosed} for its send
 * thread to finish, on the event loop; a watch event being sent at that moment waits (up to 30 s)
 * for the same event loop to write it. Until one of them times out, every request on that event
 * loop stalls and the server cannot shut down. It happens whenever a watch closes while an event
 * is in flight (an informer closed right after a change), more often on a busy machine.
 *
 * <p>And a closing watch leaves the CRUD dispatcher's set of watches before its send thread stops:
 * fabric8 removes it only after, so a change made in between is refused by the stopped thread,
 * and that change's request is never answered. Removing it needs two private fields of fabric8's
 * dispatchers; if a fabric8 release renames them, every mock API test fails at its start.
 *
 * <p>And a JSON patch whose operation fails (a {@code test} that does not hold, a missing path)
 * escapes fabric8's CRUD dispatcher as an exception, so the request is never answered; it is
 * answered 422 with a Status, as the real API server does (apiserver endpoints/handlers/patch.go).
 */
final class OffLoopWatchCloseDispatcher extends Dispatcher implements Resetable, CustomResourceAware {
    private final KubernetesMixedDispatcher delegate;
    /** The CRUD dispatcher's watches, and the lock its changes hold while they notify them. */
    private final Set<?> watches;

    private final Lock changes;

    OffLoopWatchCloseDispatcher(Map<ServerRequest, Queue<ServerResponse>> expectations) {
        delegate = new KubernetesMixedDispatcher(expectations);
        Object crud = read(KubernetesMixedDispatcher.class, "kubernetesCrudDispatcher", delegate);
        watches = (Set<?>) read(KubernetesCrudDispatcher.class, "watchEventListeners", crud);
        changes = ((ReadWriteLock) read(KubernetesCrudDispatcher.class, "lock", crud)).writeLock();
    }

    private static Object read(Class<?> type, String name, Object instance) {
        try {
            Field field = type.getDeclaredField(name);
            field.setAccessible(true);
            return field.get(instance);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "fabric8's mock server changed: no field " + type.getSimpleName() + "." + name, e);
        }
    }

    /** No change notifies the watch after this returns. */
    private void forget(WebSocketListener watch) {
        changes.lock();
        try {
            watches.remove(watch);
        } finally {
            changes.unlock();
        }
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        MockResponse response;
        try {
            response = delegate.dispatch(request);
        } catch (JsonPatchException e) {
            return new MockResponse()
                    .setResponseCode(422)
                    .setBody(Serialization.asJson(new StatusBuilder()
                            .withStatus("Failure")
                            .withCode(422)
                            .withMessage(e.toString())
                            .build()));
        }
        WebSocketListener listener = response == null ? null : response.getWebSocketListener();
        if (listener != null && !(listener instanceof OffLoopClose)) {
            response.withWebSocketUpgrade(new OffLoopClose(listener));
        }
        return response;
    }

    @Override
    public void shutdown() {
        delegate.shutdown();
    }

    @Override
    public void releaseResources() {
        delegate.releaseResources();
    }

    @Override
    public void reset() {
        delegate.reset();
    }

    @Override
    public void expectCustomResource(CustomResourceDefinitionContext resource) {
        delegate.expectCustomResource(resource);
    }

    /**
     * Forwards every callback; a closing watch is forgotten first, and the two callbacks that may
     * wait for the event loop run on a thread of their own.
     */
    private final class OffLoopClose extends WebSocketListener {
        private final WebSocketListener delegate;

        OffLoopClose(WebSocketListener delegate) {
            this.delegate = delegate;
        }

        private static void offLoop(String what, Runnable callback) {
            Thread thread = new Thread(callback, "mock-api-websocket-" + what);
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void onBeforeAccept(WebSocket webSocket, Response response) {
            delegate.onBeforeAccept(webSocket, response);
        }

        @Override
        public void onOpen(WebSocket webSocket, Response response) {
            delegate.onOpen(webSocket, response);
        }

        @Override
        public void onMessage(WebSocket webSocket, String text) {
            delegate.onMessage(webSocket, text);
        }

        @Override
        public void onMessage(WebSocket webSocket, ByteString bytes) {
            delegate.onMessage(webSocket, bytes);
        }

        @Override
        public void onMessage(WebSocket webSocket, byte[] bytes) {
            delegate.onMessage(webSocket, bytes);
        }

        @Override
        public void onPing(WebSocket webSocket, byte[] bytes) {
            delegate.onPing(webSocket, bytes);
        }

        @Override
        public void onClosing(WebSocket webSocket, int code, String reason) {
            forget(delegate);
            delegate.onClosing(webSocket, code, reason);
        }

        @Override
        public void onClosed(WebSocket webSocket, int code, String reason) {
            forget(delegate);
            offLoop("closed", () -> delegate.onClosed(webSocket, code, reason));
        }

        @Override
        public void onFailure(WebSocket webSocket, Throwable failure, Response response) {
            forget(delegate);
            offLoop("failure", () -> delegate.onFailure(webSocket, failure, response));
        }
    }
}
