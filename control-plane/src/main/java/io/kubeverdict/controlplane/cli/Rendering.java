// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLWriteFeature;

/**
 * JSON and YAML for the commands: Jackson (fabric8's) for plain values, protobuf's JsonFormat for
 * messages (field names in lowerCamelCase, enums by name, Timestamps/Durations as strings), so a
 * message reads the same in JSON, YAML and grpcurl.
 */
final class Rendering {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final YAMLMapper YAML = YAMLMapper.builder()
            .disable(YAMLWriteFeature.WRITE_DOC_START_MARKER)
            .enable(YAMLWriteFeature.MINIMIZE_QUOTES, YAMLWriteFeature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
            .build();
    private static final JsonFormat.Printer PROTO = JsonFormat.printer();

    private Rendering() {}

    /** A message as a Jackson tree (via its canonical proto3 JSON). */
    static JsonNode tree(MessageOrBuilder message) {
        try {
            return JSON.readTree(PROTO.print(message));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print " + message.getClass().getSimpleName(), e);
        }
    }

    /**
     * JSON of a value (maps, lists, records, trees) on one line, newline-terminated: every
     * command's json output is one object per line (streams too), for jq and line-based readers.
     */
    static String json(Object value) {
        return JSON.writeValueAsString(toTree(value)) + "\n";
    }

    /** YAML of a value, newline-terminated, no document marker. */
    static String yaml(Object value) {
        String text = YAML.writeValueAsString(toTree(value));
        return text.endsWith("\n") ? text : text + "\n";
    }

    /** json or yaml of a value; table output is each command's own. */
    static String machine(OutputFormat format, Object value) {
        return switch (format) {
            case json -> json(value);
            case yaml -> yaml(value);
            case table, wide -> throw new IllegalArgumentException("table output is the command's own");
        };
    }

    private static Object toTree(Object value) {
        return value instanceof MessageOrBuilder m ? tree(m) : value;
    }
}
