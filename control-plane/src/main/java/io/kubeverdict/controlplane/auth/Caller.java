// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Context;
import io.grpc.Status;

/**
 * Who made the current call, as its bearer token says: an agent bound to a node, another
 * authenticated user, or a caller whose token was not accepted, with why. A call without a token
 * that arrived on loopback is {@link #loopback()}: it came through {@code kubectl port-forward}
 * (which the API server authorized: {@code pods/portforward} in the control plane's namespace) or
 * from inside the control plane's pod.
 *
 * @param node the node an agent's token is bound to; null for anyone else
 * @param refusal non-null when the token was not accepted: the status to fail a call with
 * @param onLoopback a tokenless call from a loopback address
 * @param inspection for a user other than the agents: OK when it may inspect every node, else why
 *     not ({@link InspectionAccess}); null for everyone else
 */
public record Caller(String username, String node, Status refusal, boolean onLoopback, Status inspection) {
    static final Context.Key<Caller> KEY = Context.key("kubeverdict-caller");

    /** The caller of the current call; null when it sent no bearer token (and is not on loopback). */
    public static Caller current() {
        return KEY.get();
    }

    public static Caller agent(String username, String node) {
        return new Caller(username, node, null, false, null);
    }

    public static Caller user(String username, Status inspection) {
        return new Caller(username, null, null, false, inspection);
    }

    public static Caller refused(String username, Status why) {
        return new Caller(username, null, why, false, null);
    }

    public static Caller loopback() {
        return new Caller("", null, null, true, null);
    }

    public boolean isAgent() {
        return refusal == null && node != null;
    }

    @Override
    public String toString() {
        if (onLoopback) {
            return "a client on loopback without a token";
        }
        return username.isEmpty() ? "an unidentified caller" : username + (node == null ? "" : " (node " + node + ")");
    }
}
