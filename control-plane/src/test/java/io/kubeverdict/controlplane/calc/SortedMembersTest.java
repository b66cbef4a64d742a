// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Set contents as shared sorted chunks, and changes composed: random changes of every size (one
 * member, hundreds, a bulk of thousands, so that chunks split, empty and vanish) against a
 * TreeSet; every earlier version keeps its members; a chain of changes composed with {@link
 * SetChange#then} is the difference of its two ends.
 */
class SortedMembersTest {

    @Test
    void versionsHoldTheirMembersWhateverCameAfter() {
        for (long seed = 1; seed <= 30; seed++) {
            Random r = new Random(seed);
            TreeSet<String> want = new TreeSet<>();
            SortedMembers members = SortedMembers.EMPTY;
            List<SortedMembers> versions = new ArrayList<>();
            List<List<String>> wanted = new ArrayList<>();
            for (int step = 0; step < 60; step++) {
                int size = switch (r.nextInt(4)) {
                    case 0 -> 1;
                    case 1 -> r.nextInt(20);
                    case 2 -> r.nextInt(600);
                    default -> r.nextInt(4000);
                };
                TreeSet<String> added = new TreeSet<>();
                TreeSet<String> removed = new TreeSet<>();
                List<String> present = new ArrayList<>(want);
                for (int i = 0; i < size; i++) {
                    if (r.nextBoolean() && !present.isEmpty()) {
                        removed.add(present.get(r.nextInt(present.size())));
                    } else {
                        String m = "10." + r.nextInt(40) + "." + r.nextInt(256) + "." + r.nextInt(256);
                        if (!want.contains(m)) {
                            added.add(m);
                        }
                    }
                }
                members = members.with(new ArrayList<>(added), new ArrayList<>(removed));
                want.removeAll(removed);
                want.addAll(added);
                assertThat(members.toArray()).as("seed %d, step %d", seed, step).containsExactlyElementsOf(want);
                assertThat(members.size()).isEqualTo(want.size());
                versions.add(members);
                wanted.add(List.copyOf(want));
            }
            for (int i = 0; i < versions.size(); i++) {
                assertThat(versions.get(i).toArray())
                        .as("seed %d, version %d after the later ones", seed, i)
                        .containsExactlyElementsOf(wanted.get(i));
            }
        }
    }

    @Test
    void composedChangesAreTheDifferenceOfTheirEnds() {
        for (long seed = 1; seed <= 200; seed++) {
            Random r = new Random(seed);
            TreeSet<String> start = new TreeSet<>();
            for (int i = 0; i < r.nextInt(30); i++) {
                start.add("m" + r.nextInt(40));
            }
            TreeSet<String> now = new TreeSet<>(start);
            SetVersion from = SetVersion.of("s:x", io.kubeverdict.proto.v1.IpSetType.IP, List.copyOf(start));
            SetChange all = null;
            for (int step = 0; step < 1 + r.nextInt(6); step++) {
                TreeSet<String> added = new TreeSet<>();
                TreeSet<String> removed = new TreeSet<>();
                for (int i = 0; i < r.nextInt(8); i++) {
                    String m = "m" + r.nextInt(40);
                    if (now.contains(m)) {
                        removed.add(m);
                    } else {
                        added.add(m);
                    }
                }
                now.removeAll(removed);
                now.addAll(added);
                SetVersion to = from.with(List.copyOf(added), List.copyOf(removed));
                SetChange c = new SetChange(from, to, List.copyOf(added), List.copyOf(removed));
                all = all == null ? c : all.then(c);
                from = to;
            }
            TreeSet<String> wantAdded = new TreeSet<>(now);
            wantAdded.removeAll(start);
            TreeSet<String> wantRemoved = new TreeSet<>(start);
            wantRemoved.removeAll(now);
            assertThat(all.added()).as("seed %d", seed).containsExactlyElementsOf(wantAdded);
            assertThat(all.removed()).as("seed %d", seed).containsExactlyElementsOf(wantRemoved);
            assertThat(all.to().proto().getMembersList()).containsExactlyElementsOf(now);
        }
    }

    @Test
    void aChangeThatDoesNotContinueTheLastHasNoKnownDelta() {
        SetVersion a = SetVersion.of("s:x", io.kubeverdict.proto.v1.IpSetType.IP, List.of("1"));
        SetVersion b = a.with(List.of("2"), List.of());
        SetVersion c = SetVersion.of("s:x", io.kubeverdict.proto.v1.IpSetType.IP, List.of("1", "2", "3"));
        SetChange gap = new SetChange(a, b, List.of("2"), List.of()).then(new SetChange(c, c, List.of(), List.of()));
        assertThat(gap.from()).isNull();
        assertThat(gap.to()).isSameAs(c);
    }

    /**
     * One chunk's merge (changes found by halving, runs copied) against the set operations: the
     * chunk without the removed members it has, with the added ones it lacks; changes that are
     * members already, or not members, or both added and removed, included.
     */
    @Test
    void aChunkMergeIsTheChunkWithoutTheRemovedAndWithTheAdded() {
        for (long seed = 1; seed <= 2000; seed++) {
            Random r = new Random(seed);
            int range = 1 + r.nextInt(r.nextBoolean() ? 20 : 2000);
            TreeSet<String> chunk = new TreeSet<>();
            TreeSet<String> added = new TreeSet<>();
            TreeSet<String> removed = new TreeSet<>();
            int size = r.nextInt(SortedMembers.MAX_CHUNK);
            for (int i = 0; i < size; i++) {
                chunk.add(member(r, range));
            }
            for (int i = r.nextInt(r.nextBoolean() ? 3 : 40); i > 0; i--) {
                added.add(member(r, range));
            }
            for (int i = r.nextInt(r.nextBoolean() ? 3 : 40); i > 0; i--) {
                removed.add(r.nextBoolean() && !chunk.isEmpty() ? pick(chunk, r) : member(r, range));
            }
            TreeSet<String> want = new TreeSet<>(chunk);
            want.removeAll(removed);
            for (String a : added) {
                if (!chunk.contains(a)) {
                    want.add(a);
                }
            }
            String[] got =
                    SortedMembers.merge(chunk.toArray(new String[0]), new ArrayList<>(added), new ArrayList<>(removed));
            assertThat(got)
                    .as("seed %d: %s + %s - %s", seed, chunk, added, removed)
                    .containsExactlyElementsOf(want);
        }
    }

    private static String member(Random r, int range) {
        return "10.0." + r.nextInt(range);
    }

    private static String pick(TreeSet<String> s, Random r) {
        return new ArrayList<>(s).get(r.nextInt(s.size()));
    }
}
