package io.kubeverdict.controlplane.auth;

import io.grpc.Context;
import io.grpc.Status;

/**
 * Who made the current call, as its bearer token says: an agent bound to a node, another
 * authenticated user (an operator), or a caller whose token was not accepted, with why.
 *
 * @param node the node an agent's token is bound to; null for a token of anyone else
 * @param refusal non-null when the token was not accepted: the status to fail a call with
 */
public record Caller(String username, String node, Status refusal) {
    static final Context.Key<Caller> KEY = Context.key("kubeverdict-caller");

    /** The caller of the current call; null when it sent no bearer token. */
    public static Caller current() {
        return KEY.get();
    }

    public static Caller agent(String username, String node) {
        return new Caller(username, node, null);
    }

    public static Caller user(String username) {
        return new Caller(username, null, null);
    }

    public static Caller refused(String username, Status why) {
        return new Caller(username, null, why);
    }

    public boolean isAgent() {
        return refusal == null && node != null;
    }

    @Override
    public String toString() {
        return username.isEmpty() ? "an unidentified caller" : username + (node == null ? "" : " (node " + node + ")");
    }
}
