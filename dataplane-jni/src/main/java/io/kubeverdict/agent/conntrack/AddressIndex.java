// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.policy.IpAddress;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * A few addresses numbered in the order given (duplicates once), looked up by a dumped entry's
 * address words without allocating: a pass looks up two addresses of every entry a dump delivers,
 * which for a dump by mark alone is every uncut entry of a family on the node.
 */
final class AddressIndex {
    private final List<IpAddress> addresses;
    private final int[] slots; // open addressing: index + 1, 0 free

    private AddressIndex(List<IpAddress> addresses) {
        this.addresses = addresses;
        this.slots = new int[Integer.highestOneBit(Math.max(2, addresses.size()) * 2) * 2];
        for (int k = 0; k < addresses.size(); k++) {
            IpAddress a = addresses.get(k);
            int s = slot(a.family(), a.hi(), a.lo());
            while (slots[s] != 0) {
                s = (s + 1) & (slots.length - 1);
            }
            slots[s] = k + 1;
        }
    }

    static AddressIndex of(Collection<IpAddress> addresses) {
        return new AddressIndex(List.copyOf(new LinkedHashSet<>(addresses)));
    }

    int size() {
        return addresses.size();
    }

    IpAddress get(int k) {
        return addresses.get(k);
    }

    /** The address's number, or -1. */
    int indexOf(int family, long hi, long lo) {
        for (int s = slot(family, hi, lo); slots[s] != 0; s = (s + 1) & (slots.length - 1)) {
            IpAddress a = addresses.get(slots[s] - 1);
            if (a.lo() == lo && a.hi() == hi && a.family() == family) {
                return slots[s] - 1;
            }
        }
        return -1;
    }

    private int slot(int family, long hi, long lo) {
        long h = (hi * 0x9E3779B97F4A7C15L) ^ (lo * 0xC2B2AE3D27D4EB4FL) ^ family;
        return (int) (h ^ (h >>> 29) ^ (h >>> 47)) & (slots.length - 1);
    }

    @Override
    public String toString() {
        return Arrays.toString(addresses.toArray());
    }
}
