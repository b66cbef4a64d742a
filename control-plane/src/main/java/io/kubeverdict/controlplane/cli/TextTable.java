// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.util.ArrayList;
import java.util.List;

/** Columns aligned with three spaces between them, headers in capitals (kubectl's look). */
final class TextTable {
    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    TextTable(String... headers) {
        this.headers = List.of(headers);
    }

    TextTable row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("want " + headers.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object c : cells) {
            row.add(c == null || c.toString().isEmpty() ? "-" : c.toString());
        }
        rows.add(row);
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    String render() {
        int[] width = new int[headers.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = headers.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, headers, width);
        rows.forEach(r -> line(sb, r, width));
        return sb.toString();
    }

    private static void line(StringBuilder sb, List<String> cells, int[] width) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            l.append(cells.get(i));
            if (i < cells.size() - 1) {
                l.append(" ".repeat(width[i] - cells.get(i).length() + 3));
            }
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }
}
