// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import java.util.List;
import java.util.Map;

/**
 * What the TokenReview API said about a token: who it is (username, groups, extra, e.g. the
 * bound pod and node of a projected ServiceAccount token), or why it is not accepted.
 *
 * @param error null when authenticated; otherwise why not (shown to the caller and logged)
 * @param apiFailure the review could not be made (API unreachable, forbidden): retried soon
 */
public record Review(
        String username, List<String> groups, Map<String, List<String>> extra, String error, boolean apiFailure) {
    /** authentication.kubernetes.io/node-name: the node a projected token's pod runs on (Kubernetes 1.30+). */
    public static final String NODE_NAME = "authentication.kubernetes.io/node-name";

    public static final String POD_NAME = "authentication.kubernetes.io/pod-name";
    public static final String POD_UID = "authentication.kubernetes.io/pod-uid";

    public static Review authenticated(String username, List<String> groups, Map<String, List<String>> extra) {
        return new Review(username, List.copyOf(groups), Map.copyOf(extra), null, false);
    }

    public static Review rejected(String why) {
        return new Review("", List.of(), Map.of(), why, false);
    }

    public static Review failed(String why) {
        return new Review("", List.of(), Map.of(), why, true);
    }

    public boolean ok() {
        return error == null;
    }

    /** The single value of an extra key, or null when absent (or, suspiciously, not single). */
    public String extraValue(String key) {
        List<String> values = extra.get(key);
        return values != null && values.size() == 1 ? values.get(0) : null;
    }
}
