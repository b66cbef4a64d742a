// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The addresses of one family that a pass judges connections of, numbered in the batch's order;
 * per address the endpoints that have it (usually one), whether any of them may have connections
 * no verdict saw, and the earliest change that waits for them.
 */
final class FamilyTargets {
    private final int family;
    private final AddressIndex addresses;
    private final List<List<PendingEndpoint>> owners = new ArrayList<>();
    private final boolean[] unjudged;
    private final long[] since;

    private FamilyTargets(int family, Collection<PendingEndpoint> batch) {
        this.family = family;
        List<IpAddress> all = new ArrayList<>();
        for (PendingEndpoint p : batch) {
            for (IpAddress a : p.target().addresses()) {
                if (a.family() == family) {
                    all.add(a);
                }
            }
        }
        addresses = AddressIndex.of(all);
        unjudged = new boolean[addresses.size()];
        since = new long[addresses.size()];
        for (int k = 0; k < addresses.size(); k++) {
            owners.add(new ArrayList<>(1));
        }
        for (PendingEndpoint p : batch) {
            for (IpAddress a : p.target().addresses()) {
                int k = a.family() == family ? addresses.indexOf(family, a.hi(), a.lo()) : -1;
                if (k >= 0 && !owners.get(k).contains(p)) {
                    since[k] = owners.get(k).isEmpty() ? p.sinceNanos() : Math.min(since[k], p.sinceNanos());
                    owners.get(k).add(p);
                    unjudged[k] |= p.target().unjudged();
                }
            }
        }
    }

    static FamilyTargets of(int family, Collection<PendingEndpoint> batch) {
        return new FamilyTargets(family, batch);
    }

    int family() {
        return family;
    }

    int size() {
        return addresses.size();
    }

    IpAddress address(int k) {
        return addresses.get(k);
    }

    /** Whether an endpoint with address k may have connections no verdict saw. */
    boolean unjudged(int k) {
        return unjudged[k];
    }

    boolean anyUnjudged() {
        for (boolean u : unjudged) {
            if (u) {
                return true;
            }
        }
        return false;
    }

    /** The earliest change waiting for address k's connections. */
    long sinceNanos(int k) {
        return since[k];
    }

    /** The endpoints with address k (retried together when its connections could not all be judged). */
    List<PendingEndpoint> owners(int k) {
        return owners.get(k);
    }

    /** The number of the address with these words (as {@link IpAddress#hi()}, {@link IpAddress#lo()}), or -1. */
    int indexOf(long hi, long lo) {
        return addresses.indexOf(family, hi, lo);
    }

    /**
     * Whether a connection from or to address k (-1: none of ours) with this ct mark is one the pass
     * judges: every one of an unjudged endpoint's, otherwise those our queue admitted.
     */
    boolean wants(int k, int mark) {
        return k >= 0 && (unjudged[k] || (mark & FlowMarks.ADMITTED) != 0);
    }
}
