// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * What a node-address set contains: the addresses (status.addresses) of every node whose labels
 * match a selector (an admin-tier egress {@code nodes} peer). Like {@link IpSetDef}, the id is a
 * hash of the content, so equal selectors share one set.
 */
public record NodeSetDef(Selector nodes) {

    public String canonical() {
        return "nodes=" + nodes.canonical();
    }

    /** For people (`kube-verdict policies`): "addresses of nodes with role in (cp)". */
    public String readable() {
        String selector = nodes.readable();
        return selector.isEmpty() ? "addresses of every node" : "addresses of nodes with " + selector;
    }

    /** "h:" (host addresses) then 26 base32 characters of SHA-256. */
    public String id() {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(canonical().getBytes(StandardCharsets.UTF_8));
            return "h:" + IpSetDef.base32(d, 26);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present", e);
        }
    }
}
