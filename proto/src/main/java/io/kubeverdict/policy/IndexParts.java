// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * What a {@link SnapshotIndex} is made of, phase by phase: the set phase (set numbers, the address
 * and named-port tables, the membership pool), the rule phase ({@link CompiledRules}), the endpoint
 * phase ({@link EndpointTiers}) and the programs built from them. A full compile makes all of them
 * ({@link SnapshotCompiler#parts}); {@link IndexUpdate} makes the next index's parts from these,
 * redoing only what a change touches and sharing the rest. Never read on the hot path: the index
 * copies what {@code decide} reads into its own fields.
 */
record IndexParts(
        SetNumbers sets,
        ProblemList setProblems,
        boolean aliasedMembers,
        CompiledRules rules,
        EndpointTiers endpoints,
        Programs programs,
        BlockSegments v4Segments,
        BlockSegments v6Segments,
        AddressTable v4,
        AddressTable v6,
        AddressTable v4Named,
        AddressTable v6Named,
        NamedPorts namedPorts,
        MembershipPool pool) {}
