// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A set's members in ascending order, immutable: sorted chunks of at most {@link #MAX_CHUNK}
 * members. A change makes a new instance that copies only the chunks it touches (and the array
 * of chunk references) and shares the rest, so a set of tens of thousands of members changes by
 * one member for a few hundred copied references, and every earlier instance stays valid for
 * whoever reads it on another thread.
 */
final class SortedMembers {
    /** Chunks are split when they grow past this; a new chunk holds half of it. */
    static final int MAX_CHUNK = 512;

    static final SortedMembers EMPTY = new SortedMembers(new String[0][], 0);

    private final String[][] chunks; // each non-empty and ascending; chunks ascending
    private final int size;

    private SortedMembers(String[][] chunks, int size) {
        this.chunks = chunks;
        this.size = size;
    }

    int size() {
        return size;
    }

    /**
     * This set with {@code added} (ascending, none of them a member) and without {@code removed}
     * (ascending). A chunk no change falls into is shared with this instance.
     */
    SortedMembers with(List<String> added, List<String> removed) {
        if (added.isEmpty() && removed.isEmpty()) {
            return this;
        }
        if (chunks.length == 0) {
            List<String[]> out = new ArrayList<>(added.size() / (MAX_CHUNK / 2) + 1);
            split(added.toArray(new String[0]), out);
            return new SortedMembers(out.toArray(new String[0][]), added.size());
        }
        List<String[]> out = new ArrayList<>(chunks.length + 1 + added.size() / (MAX_CHUNK / 2));
        int a = 0;
        int r = 0;
        int newSize = size;
        int copied = 0; // chunks before this index are in out already
        while (a < added.size() || r < removed.size()) {
            // The chunk the next change falls into (found by halving), and the changes below the next chunk.
            String first = r == removed.size()
                    ? added.get(a)
                    : a == added.size() || removed.get(r).compareTo(added.get(a)) < 0 ? removed.get(r) : added.get(a);
            int c = chunkOf(first, copied);
            for (int i = copied; i < c; i++) {
                out.add(chunks[i]); // untouched: shared
            }
            String next = c + 1 < chunks.length ? chunks[c + 1][0] : null;
            int aEnd = below(added, a, next);
            int rEnd = below(removed, r, next);
            String[] merged = merge(chunks[c], added.subList(a, aEnd), removed.subList(r, rEnd));
            newSize += merged.length - chunks[c].length;
            split(merged, out);
            a = aEnd;
            r = rEnd;
            copied = c + 1;
        }
        for (int i = copied; i < chunks.length; i++) {
            out.add(chunks[i]);
        }
        return new SortedMembers(out.toArray(new String[0][]), newSize);
    }

    /** The last chunk from {@code from} on whose first member is at most {@code m} ({@code from} when none is). */
    private int chunkOf(String m, int from) {
        int lo = from;
        int hi = chunks.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (chunks[mid][0].compareTo(m) <= 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** The end of the run of {@code list} from {@code from} that is below {@code bound} (null: no bound). */
    private static int below(List<String> list, int from, String bound) {
        int i = from;
        while (i < list.size() && (bound == null || list.get(i).compareTo(bound) < 0)) {
            i++;
        }
        return i;
    }

    /**
     * The chunk with {@code added} and without {@code removed} (both ascending): each change's
     * place found by halving from the last one's, the runs between them copied whole, so a
     * change of a few members costs a few searches and one copy of the chunk. An added member
     * the chunk has is kept once; a removed one it lacks changes nothing (a member both added
     * and removed: removed if the chunk has it, added if not).
     */
    static String[] merge(String[] chunk, List<String> added, List<String> removed) {
        String[] out = new String[chunk.length + added.size()];
        int n = 0;
        int i = 0; // chunk members before i are copied or dropped
        int a = 0;
        int r = 0;
        while (a < added.size() || r < removed.size()) {
            boolean add =
                    r == removed.size() || (a < added.size() && added.get(a).compareTo(removed.get(r)) <= 0);
            String m = add ? added.get(a++) : removed.get(r++);
            int at = Arrays.binarySearch(chunk, i, chunk.length, m);
            int end = at >= 0 ? at : -at - 1;
            System.arraycopy(chunk, i, out, n, end - i);
            n += end - i;
            i = end;
            if (add && at < 0) {
                out[n++] = m;
            } else if (!add && at >= 0) {
                i++; // removed: not copied
            }
        }
        System.arraycopy(chunk, i, out, n, chunk.length - i);
        n += chunk.length - i;
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** Adds a merged chunk to {@code out}: dropped when empty, in halves of {@link #MAX_CHUNK} when too large. */
    private static void split(String[] merged, List<String[]> out) {
        if (merged.length <= MAX_CHUNK) {
            if (merged.length > 0) {
                out.add(merged);
            }
            return;
        }
        for (int from = 0; from < merged.length; from += MAX_CHUNK / 2) {
            out.add(Arrays.copyOfRange(merged, from, Math.min(merged.length, from + MAX_CHUNK / 2)));
        }
    }

    /** Every member in ascending order, as one new array. */
    String[] toArray() {
        String[] out = new String[size];
        int n = 0;
        for (String[] chunk : chunks) {
            System.arraycopy(chunk, 0, out, n, chunk.length);
            n += chunk.length;
        }
        return out;
    }
}
