// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

/**
 * Whether two strings are within a few edits of each other: insertions, deletions, substitutions
 * and swaps of adjacent characters (optimal string alignment). A swap counts once because
 * "NetwrokPolicy" is one slip of the fingers, not two.
 */
final class EditDistance {
    private EditDistance() {}

    /** Cost O(a*b) only for strings whose lengths differ by at most {@code max}; others fail at once. */
    static boolean atMost(String a, String b, int max) {
        if (Math.abs(a.length() - b.length()) > max) {
            return false;
        }
        int[] before = new int[b.length() + 1];
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int d = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d = Math.min(d, before[j - 2] + 1);
                }
                current[j] = d;
            }
            int[] t = before;
            before = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()] <= max;
    }
}
