// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Makes the index of a changed snapshot from the index of the snapshot before, redoing only the
 * compile phases the change touches; the result decides exactly as a full compile of the new
 * snapshot would (codes included), and the old index is never changed, so readers of it see the
 * whole old state until they read the new index:
 *
 * <ul>
 *   <li>IP-set members added or removed, or a set added or removed: the address tables are edited
 *       copy-on-write (only the 4 KiB pages the keys fall in are copied) and each changed key gets
 *       a new membership list appended to the shared pool;</li>
 *   <li>endpoints changed: their phase ({@link EndpointTiers}: numbers, tiers, watches; a few hundred
 *       endpoints) is redone and only the address entries whose endpoint number changed are edited;
 *       bit-mask programs are reused by tier list;</li>
 *   <li>policies changed, or a set added or removed: the rule phase ({@link CompiledRules}) and the
 *       endpoint phase are redone, with new programs; the address tables stay as they are, and so
 *       do the ipBlock segments their entries record ({@link BlockSegments}: a program whose new
 *       ranges cut those segments searches its ranges until the next full compile).</li>
 * </ul>
 *
 * <p>A full compile is done instead when the change cannot be followed key by key (a set that
 * changes type; a member that is unusable or not spelled canonically; unusable members or two
 * spellings of one member in the old snapshot; duplicate ids), when most members changed (a new
 * stream's snapshot: its sets are all new messages), or when the tables or the pool have used up
 * their room (a table past {@link AddressTable#MAX_LOAD_PERCENT}% load, more membership lists
 * appended than the full compile made). One writer: updates of one lineage of indexes must not run
 * concurrently (they append to one pool).
 */
public final class IndexUpdate {

    /** Members (of sets that changed) to compare before a full compile is cheaper than diffing. */
    private static final int DIFF_BUDGET_FLOOR = 4096;

    /**
     * @param index the index of the new snapshot
     * @param incremental false when it was compiled from scratch
     * @param summary what was redone, or why everything was ("3 set members, endpoints")
     * @param defect what the update threw when it failed (a bug to report; the compile stands in), or null
     */
    public record Result(SnapshotIndex index, boolean incremental, String summary, RuntimeException defect) {
        public Result(SnapshotIndex index, boolean incremental, String summary) {
            this(index, incremental, summary, null);
        }
    }

    private final SnapshotIndex base;
    private final IndexParts parts;
    private final NodeSnapshot now;
    private AddressTable.Editor v4;
    private AddressTable.Editor v6;
    private AddressTable.Editor v4Named;
    private AddressTable.Editor v6Named;
    private SetNumbers sets;
    private NamedPorts namedPorts;
    private int memberChanges;
    private int[] list = new int[64];
    private final int[] scratchOld = new int[64];

    private IndexUpdate(SnapshotIndex base, NodeSnapshot now) {
        this.base = base;
        this.parts = base.parts;
        this.now = now;
        this.sets = parts.sets();
        this.namedPorts = parts.namedPorts();
    }

    static Result apply(SnapshotIndex base, NodeSnapshot before, NodeSnapshot now) {
        String refusal;
        RuntimeException defect = null;
        try {
            IndexUpdate u = new IndexUpdate(base, now);
            refusal = u.refusal(before);
            if (refusal == null) {
                return u.result;
            }
        } catch (Refused r) {
            refusal = r.getMessage();
        } catch (RuntimeException e) {
            // A defect, not an input the update refuses; the compile is the reference either way,
            // and an enforcer that kept failing here would stop applying changes.
            refusal = "update failed (" + e + ")";
            defect = e;
        }
        return new Result(SnapshotIndex.compile(now), false, refusal, defect);
    }

    private Result result;

    /** Builds {@link #result}; returns why a full compile is needed instead, or null. */
    private String refusal(NodeSnapshot before) {
        if (!before.getNode().equals(now.getNode())) {
            return "another node";
        }
        // Sets: which differ, and is following them key by key cheaper than compiling?
        SetPairs pairs = SetPairs.of(before.getIpSetsList(), now.getIpSetsList());
        if (pairs == null) {
            return "duplicate ip set ids";
        }
        if (pairs.changedMembers > DIFF_BUDGET_FLOOR && pairs.changedMembers * 4 > pairs.allMembers) {
            return "most sets are new";
        }
        boolean setsRenumbered = false;
        List<String> setChanges = new ArrayList<>();
        for (int i = 0; i < pairs.changed.size(); i++) {
            IpSet set = pairs.changed.get(i);
            IpSet old = pairs.changedOld.get(i);
            if (old != null && old.getTypeValue() != set.getTypeValue()) {
                return "ip set " + set.getId() + " changed type";
            }
            if (old == null) {
                requireCleanSets();
                sets = sets.with(set.getId(), type(set));
                int number = sets.number(set.getId());
                for (String m : MemberDiff.of(List.of(), set.getMembersList()).added()) {
                    member(number, set.getType(), m, true);
                }
                setsRenumbered = true;
            } else if (!old.equals(set)) {
                requireCleanSets();
                int number = sets.number(set.getId());
                if (number < 0) {
                    return "ip set " + set.getId() + " was unusable";
                }
                MemberDiff diff = MemberDiff.of(old.getMembersList(), set.getMembersList());
                for (String m : diff.removed()) {
                    member(number, set.getType(), m, false);
                }
                for (String m : diff.added()) {
                    member(number, set.getType(), m, true);
                }
            }
        }
        for (IpSet old : pairs.removed) {
            requireCleanSets();
            int number = sets.number(old.getId());
            if (number >= 0) {
                for (String m : MemberDiff.of(old.getMembersList(), List.of()).removed()) {
                    member(number, old.getType(), m, false);
                }
                sets = sets.without(old.getId());
            }
            setsRenumbered = true;
        }
        if (memberChanges > 0) {
            setChanges.add(memberChanges + (memberChanges == 1 ? " set member" : " set members"));
        }
        if (setsRenumbered) {
            setChanges.add("sets added or removed");
        }

        // Rules: any policy added, removed or changed, or sets the rules may name came or went.
        // List equality is element equality in order; a generated message's equals returns at once
        // for the same instance, which unchanged parts are (the assembler keeps them).
        boolean rulesChanged = setsRenumbered || !before.getPoliciesList().equals(now.getPoliciesList());
        boolean endpointsChanged = rulesChanged || !before.getEndpointsList().equals(now.getEndpointsList());
        CompiledRules rules = rulesChanged ? CompiledRules.compile(now.getPoliciesList(), sets) : parts.rules();
        EndpointTiers endpoints =
                endpointsChanged ? EndpointTiers.compile(now.getEndpointsList(), rules) : parts.endpoints();
        Programs programs = !endpointsChanged
                ? parts.programs()
                : new Programs(
                        rules,
                        endpoints,
                        rulesChanged ? Map.of() : parts.programs().cache,
                        parts.v4Segments(),
                        parts.v6Segments());
        if (endpointsChanged) {
            renumberAddresses(parts.endpoints().addresses, endpoints.addresses);
            setChanges.add(rulesChanged ? "policies and endpoints" : "endpoints");
        }
        MembershipPool pool = parts.pool();
        if (pool.appended() > Math.max(pool.compiledSize(), 1 << 16)) {
            return "membership lists appended since the full compile outgrew it";
        }
        IndexParts next = new IndexParts(
                sets,
                parts.setProblems(),
                parts.aliasedMembers(),
                rules,
                endpoints,
                programs,
                parts.v4Segments(),
                parts.v6Segments(),
                table(v4, parts.v4()),
                table(v6, parts.v6()),
                table(v4Named, parts.v4Named()),
                table(v6Named, parts.v6Named()),
                namedPorts,
                pool);
        result = new Result(
                new SnapshotIndex(now.getNode(), next),
                true,
                setChanges.isEmpty() ? "nothing" : String.join(", ", setChanges));
        return null;
    }

    private static IpSetType type(IpSet set) {
        IpSetType t = set.getType();
        if (t != IpSetType.IP && t != IpSetType.IP_AND_PORT) {
            throw new Refused("ip set " + set.getId() + " has an unknown type");
        }
        return t;
    }

    /** Set members are followed key by key only when the old snapshot's sets were all clean. */
    private void requireCleanSets() {
        if (parts.setProblems().count() > 0) {
            throw new Refused("the snapshot had unusable ip sets or members");
        }
        if (parts.aliasedMembers()) {
            throw new Refused("the snapshot spelled a set member two ways");
        }
    }

    /** Adds or removes set {@code number} in the membership list of one member's key. */
    private void member(int number, IpSetType type, String member, boolean add) {
        MemberKey key = MemberKey.parse(member, type);
        if (key == null || !key.canonical().equals(member)) {
            throw new Refused("set member \"" + member + "\" is unusable or not canonical");
        }
        boolean named = type == IpSetType.IP_AND_PORT;
        AddressTable.Editor table = editor(named, key.v4());
        long entry = table.lookup(key.hi(), key.lo(), key.ext());
        long value = entry >= 0 ? entry : named ? 0 : newAddress(key.v4(), key.hi(), key.lo(), -1);
        int[] pool = parts.pool().array();
        int membership = (int) value;
        if (Membership.contains(pool, membership, number) == add) {
            // The diff names each spelling once, so the key is already as wanted only when another
            // spelling of it is in the set too: one string of the two going must not drop the key.
            throw new Refused("set member \"" + member + "\" is spelled another way in the set too");
        }
        int n = Membership.size(pool, membership);
        if (list.length < n + 1) {
            list = new int[n + 1];
        }
        int[] old = n <= scratchOld.length ? scratchOld : new int[n];
        if (membership != Membership.EMPTY) {
            Membership.copy(pool, membership, old);
        } else {
            n = 0;
        }
        int size = 0;
        boolean placed = false;
        for (int i = 0; i < n; i++) {
            int s = old[i];
            if (add && !placed && number < s) {
                list[size++] = number;
                placed = true;
            }
            if (add || s != number) {
                list[size++] = s;
            }
        }
        if (add && !placed) {
            list[size++] = number;
        }
        long listAt = Membership.of(list, size, parts.pool()) & 0xFFFF_FFFFL;
        if (!table.put(key.hi(), key.lo(), key.ext(), (value >>> 32 << 32) | listAt)) {
            throw new Refused("an address table is full");
        }
        if (named && add) {
            namedPorts = namedPorts.with(key.ext());
        }
        memberChanges++;
    }

    /** Edits the endpoint part of every address whose endpoint number changed. */
    private void renumberAddresses(List<EndpointTiers.LocalAddress> before, List<EndpointTiers.LocalAddress> after) {
        if (before.equals(after)) {
            return; // the usual case: tiers or labels changed, not addresses or numbering
        }
        Map<IpAddress, Integer> was = new HashMap<>();
        for (EndpointTiers.LocalAddress a : before) {
            was.put(new IpAddress(a.family(), a.hi(), a.lo()), a.endpoint());
        }
        Map<IpAddress, Integer> is = new HashMap<>();
        for (EndpointTiers.LocalAddress a : after) {
            is.put(new IpAddress(a.family(), a.hi(), a.lo()), a.endpoint());
        }
        Set<IpAddress> all = new HashSet<>(was.keySet());
        all.addAll(is.keySet());
        for (IpAddress a : all) {
            int endpoint = is.getOrDefault(a, -1);
            if (endpoint == was.getOrDefault(a, -1)) {
                continue;
            }
            AddressTable.Editor table = editor(false, a.family() == IpAddress.V4);
            long entry = table.lookup(a.hi(), a.lo(), 0);
            if (entry < 0 && endpoint < 0) {
                continue;
            }
            long value = entry < 0
                    ? newAddress(a.family() == IpAddress.V4, a.hi(), a.lo(), endpoint)
                    : AddressEntry.of(endpoint, AddressEntry.segment(entry), AddressEntry.membership(entry));
            if (!table.put(a.hi(), a.lo(), 0, value)) {
                throw new Refused("an address table is full");
            }
        }
    }

    /** The entry of an address new to its table: no sets yet, its segment in the lineage's numbering. */
    private long newAddress(boolean v4Key, long hi, long lo, int endpoint) {
        BlockSegments segments = v4Key ? parts.v4Segments() : parts.v6Segments();
        return AddressEntry.of(endpoint, segments.of(hi, lo), Membership.EMPTY);
    }

    private AddressTable.Editor editor(boolean named, boolean v4Key) {
        if (named) {
            if (v4Key) {
                return v4Named == null ? v4Named = parts.v4Named().edit() : v4Named;
            }
            return v6Named == null ? v6Named = parts.v6Named().edit() : v6Named;
        }
        if (v4Key) {
            return v4 == null ? v4 = parts.v4().edit() : v4;
        }
        return v6 == null ? v6 = parts.v6().edit() : v6;
    }

    private static AddressTable table(AddressTable.Editor edited, AddressTable unchanged) {
        return edited == null ? unchanged : edited.table();
    }

    /** Why a change is compiled from scratch instead. */
    private static final class Refused extends RuntimeException {
        Refused(String why) {
            super(why, null, false, false);
        }
    }
}
