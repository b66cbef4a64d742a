// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The addresses endpoints learned from the DNS answers they received, as the verdict function
 * asks for them: a domain-name peer ({@code Peer.domain_names}) matches a destination that is in
 * the source endpoint's learned set of that peer, unexpired. The numbers are those of one
 * {@link SnapshotIndex} ({@link SnapshotIndex#domainSetId}, {@link SnapshotIndex#endpointId});
 * what keeps the sets (and decides what "unexpired" means at the moment asked) is the agent's.
 * Implementations called on the hot path must not allocate.
 */
@FunctionalInterface
public interface LearnedAddresses {

    /** Nothing learned: domain-name peers match nothing (the offline tools; before any answer). */
    LearnedAddresses NONE = (endpoint, domainSet, family, hi, lo) -> false;

    /**
     * Whether endpoint learned the address (family {@link IpAddress#V4} with the address in the
     * low 32 bits of lo, or {@link IpAddress#V6}) for domain set domainSet and it has not expired.
     */
    boolean contains(int endpoint, int domainSet, int family, long hi, long lo);

    /**
     * The name whose answer taught endpoint the address for domainSet, or null when it is not
     * learned (or the implementation keeps no names). For explanations; may allocate.
     */
    default String nameOf(int endpoint, int domainSet, int family, long hi, long lo) {
        return null;
    }
}
