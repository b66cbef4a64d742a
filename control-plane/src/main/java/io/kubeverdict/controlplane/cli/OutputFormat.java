// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code -o table|wide|json|yaml}: the same on every command (table and wide are for people, the
 * rest for tools); wide is the table with the columns that do not fit a terminal, where a command
 * has them (status), else the table.
 */
enum OutputFormat {
    table,
    wide,
    json,
    yaml;

    /** A table for people (table or wide). */
    boolean isTable() {
        return this == table || this == wide;
    }

    /** Any case; {@code text} is the old spelling of table. */
    static final class Converter implements ITypeConverter<OutputFormat> {
        @Override
        public OutputFormat convert(String value) {
            String v = value.toLowerCase(Locale.ROOT);
            if (v.equals("text")) {
                return table;
            }
            try {
                return OutputFormat.valueOf(v);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("expected table, wide, json or yaml, got '" + value + "'");
            }
        }
    }
}
