// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import picocli.CommandLine.Option;

/** The {@code -o/--output} option every command has. */
final class OutputOption {
    @Option(
            names = {"-o", "--output"},
            paramLabel = "table|wide|json|yaml",
            defaultValue = "table",
            converter = OutputFormat.Converter.class,
            description = "table (aligned columns, default), wide (more columns), json or yaml.")
    OutputFormat format = OutputFormat.table;

    OutputFormat format() {
        return format;
    }
}
