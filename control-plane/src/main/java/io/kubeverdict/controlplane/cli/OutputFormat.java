// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code -o table|json|yaml}: the same three on every command (table is for people, the rest for tools). */
enum OutputFormat {
    table,
    json,
    yaml;

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
                throw new TypeConversionException("expected table, json or yaml, got '" + value + "'");
            }
        }
    }
}
