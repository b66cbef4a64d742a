// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Compiles a whole NodeSnapshot into the parts of a {@link SnapshotIndex}: the set phase (every
 * member into the address tables and the membership pool), then {@link CompiledRules} and
 * {@link EndpointTiers}. Anything unusable (bad address, unknown set, wrong set type, unspecified
 * action) is skipped and counted as a problem and always in the direction of matching less: a
 * broken reference never widens what is allowed. {@link IndexUpdate} redoes the parts a change
 * touches instead.
 */
final class SnapshotCompiler {

    static final int ACTION_ALLOW = 1;
    static final int ACTION_DENY = 2;
    static final int ACTION_PASS = 3;
    /** A port clause that can never match (missing named-port set, invalid protocol or range). */
    static final int NEVER = -2;

    static final int NOT_NAMED = -1;

    private record IntArrayKey(int[] values) {
        @Override
        public boolean equals(Object o) {
            return o instanceof IntArrayKey k && Arrays.equals(values, k.values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }
    }

    final ProblemList setProblems = new ProblemList();
    /** Whether some set named one key twice (two spellings of an address, or a repeated member). */
    boolean aliasedMembers;

    SetNumbers sets;
    CompiledRules rules;
    EndpointTiers endpoints;
    BlockSegments v4Segments;
    BlockSegments v6Segments;

    private final Map<String, Integer> setIndex = new HashMap<>();
    private final java.util.List<IpSetType> setTypes = new java.util.ArrayList<>();
    private final KeyedMembers v4 = new KeyedMembers();
    private final KeyedMembers v6 = new KeyedMembers();
    private final KeyedMembers v4Named = new KeyedMembers();
    private final KeyedMembers v6Named = new KeyedMembers();

    // Membership pool: at an offset, a count followed by that many sorted set indices.
    private final IntList mem = new IntList();
    private final Map<IntArrayKey, Integer> memOffsets = new HashMap<>();

    AddressTable v4Table;
    AddressTable v6Table;
    AddressTable v4NamedTable;
    AddressTable v6NamedTable;
    NamedPorts namedPorts;
    MembershipPool pool;

    SnapshotCompiler compile(NodeSnapshot snapshot) {
        mem.add(0); // offset 0: the empty membership list
        for (IpSet set : snapshot.getIpSetsList()) {
            addSet(set);
        }
        sets = new SetNumbers(setIndex, setTypes.toArray(new IpSetType[0]));
        rules = CompiledRules.compile(snapshot.getPoliciesList(), sets);
        endpoints = EndpointTiers.compile(snapshot.getEndpointsList(), rules);
        v4Segments = BlockSegments.of(rules.ruleV4);
        v6Segments = BlockSegments.of(rules.ruleV6);
        for (EndpointTiers.LocalAddress a : endpoints.addresses) {
            KeyedMembers keys = a.family() == IpAddress.V4 ? v4 : v6;
            keys.setEndpoint(keys.indexOf(a.hi(), a.lo(), 0), a.endpoint());
        }
        v4Table = addressTable(v4, v4Segments, true);
        v6Table = addressTable(v6, v6Segments, false);
        v4NamedTable = addressTable(v4Named, null, true);
        v6NamedTable = addressTable(v6Named, null, false);
        namedPorts = NamedPorts.of(v4Named, v6Named);
        // Room to append what updates change before the pool's array must grow.
        int[] lists = Arrays.copyOf(mem.toArray(), mem.size() + Math.max(4096, mem.size() / 8));
        pool = new MembershipPool(lists, mem.size());
        return this;
    }

    /** The compiled parts of a {@link SnapshotIndex}, with the programs built from them. */
    IndexParts parts() {
        return new IndexParts(
                sets,
                setProblems,
                aliasedMembers,
                rules,
                endpoints,
                new Programs(rules, endpoints, Map.of(), v4Segments, v6Segments),
                v4Segments,
                v6Segments,
                v4Table,
                v6Table,
                v4NamedTable,
                v6NamedTable,
                namedPorts,
                pool);
    }

    // ---- IP sets

    private void addSet(IpSet set) {
        if (setIndex.containsKey(set.getId())) {
            setProblems.add("ip set " + set.getId() + " appears twice; the first is used");
            return;
        }
        IpSetType type = set.getType();
        if (type != IpSetType.IP && type != IpSetType.IP_AND_PORT) {
            setProblems.add("ip set " + set.getId() + " has unknown type " + set.getTypeValue()
                    + "; it is left out (rules naming it cannot use it)");
            return;
        }
        int index = setTypes.size();
        setIndex.put(set.getId(), index);
        setTypes.add(type);
        for (String member : set.getMembersList()) {
            MemberKey key = MemberKey.parse(member, type);
            if (key == null) {
                setProblems.add("ip set " + set.getId() + ": invalid member \"" + member + "\" skipped");
                continue;
            }
            KeyedMembers keys = type == IpSetType.IP ? (key.v4() ? v4 : v6) : (key.v4() ? v4Named : v6Named);
            keys.addSet(key.hi(), key.lo(), key.ext(), index);
        }
    }

    /** A sorted, de-duplicated membership list: inline when short, else interned in the pool (see {@link Membership}). */
    private int membership(int[] sets, int from, int to) {
        if (from == to) {
            return 0;
        }
        int[] sorted = Arrays.copyOfRange(sets, from, to);
        Arrays.sort(sorted);
        int n = 1;
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] != sorted[n - 1]) {
                sorted[n++] = sorted[i];
            }
        }
        aliasedMembers |= n < sorted.length;
        int inline = Membership.inline(sorted, n);
        if (inline != 0) {
            return inline;
        }
        int[] list = Arrays.copyOf(sorted, n);
        return memOffsets.computeIfAbsent(new IntArrayKey(list), k -> {
            int offset = mem.size();
            mem.add(list.length);
            for (int s : list) {
                mem.add(s);
            }
            return offset;
        });
    }

    /** An address table ({@link AddressEntry} values, with segments) or, without segments, a named-port table. */
    private AddressTable addressTable(KeyedMembers keys, BlockSegments segments, boolean narrow) {
        AddressTable table = new AddressTable(keys.size(), narrow);
        int[][] grouped = keys.groupedSets();
        int[] start = grouped[0];
        int[] sets = grouped[1];
        for (int i = 0; i < keys.size(); i++) {
            int membership = membership(sets, start[i], start[i + 1]);
            long value = segments == null
                    ? membership & 0xFFFF_FFFFL
                    : AddressEntry.of(keys.endpoint(i), segments.of(keys.hi(i), keys.lo(i)), membership);
            table.put(keys.hi(i), keys.lo(i), keys.ext(i), value);
        }
        return table;
    }
}
