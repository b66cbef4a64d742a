// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import com.google.protobuf.Duration;
import io.kubeverdict.agent.dns.LearnedAddressBook;
import io.kubeverdict.agent.dns.LearnedSet;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.LearnedAddress;
import io.kubeverdict.proto.v1.LearnedDomains;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What local pods learned from DNS, as inspection shows it: per (pod, domain-name peer) the
 * unexpired addresses with the name each was asked for and the time it has left. Allocates;
 * called per inspection request only.
 */
final class LearnedDomainsReport {
    private static final Comparator<LearnedSet.Entry> BY_NAME_THEN_ADDRESS = Comparator.comparing(
                    LearnedSet.Entry::name)
            .thenComparingInt(LearnedSet.Entry::family)
            .thenComparing(LearnedSet.Entry::hi, Long::compareUnsigned)
            .thenComparing(LearnedSet.Entry::lo, Long::compareUnsigned);

    private LearnedDomainsReport() {}

    static List<LearnedDomains> of(LearnedAddressBook.View view) {
        List<LearnedDomains> out = new ArrayList<>();
        if (view == null) {
            return out;
        }
        SnapshotIndex index = view.index();
        long now = view.now();
        for (int e = 0; e < index.endpointCount(); e++) {
            for (int d : view.watchesOf(e)) {
                LearnedSet set = view.set(e, d);
                LearnedDomains.Builder b = LearnedDomains.newBuilder()
                        .setEndpoint(index.endpointId(e))
                        .setDomainNames(DomainNames.newBuilder()
                                .addAllPatterns(index.domainPatterns(d))
                                .setLearnedSetId(index.domainSetId(d)));
                if (set != null) {
                    List<LearnedSet.Entry> entries = new ArrayList<>(set.entries(now));
                    entries.sort(BY_NAME_THEN_ADDRESS);
                    for (LearnedSet.Entry entry : entries) {
                        b.addAddresses(address(entry, now));
                    }
                    b.setRejected(set.rejected());
                }
                out.add(b.build());
            }
        }
        return out;
    }

    private static LearnedAddress address(LearnedSet.Entry entry, long now) {
        long left = Math.max(0, entry.expiresAtNanos() - now);
        IpAddress ip =
                entry.family() == IpAddress.V4 ? IpAddress.v4((int) entry.lo()) : IpAddress.v6(entry.hi(), entry.lo());
        return LearnedAddress.newBuilder()
                .setAddress(ip.toString())
                .setName(entry.name())
                .setExpiresIn(
                        Duration.newBuilder().setSeconds(left / 1_000_000_000L).setNanos((int) (left % 1_000_000_000L)))
                .build();
    }
}
