// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The console's JSON: messages in their canonical proto3 JSON (as {@code -o json} and grpcurl print
 * them), other values with Jackson, the codecs already on the classpath.
 */
final class ConsoleJson {
    /** With {@code < > & '} escaped as in proto3 JSON, so no answer holds markup even if sniffed. */
    private static final JsonMapper JSON = JsonMapper.builder(
                    JsonFactory.builder().characterEscapes(new HtmlEscapes()).build())
            .build();

    private static final JsonFormat.Printer PROTO =
            JsonFormat.printer().omittingInsignificantWhitespace().alwaysPrintFieldsWithNoPresence();

    private ConsoleJson() {}

    static JsonNode tree(MessageOrBuilder message) {
        return JSON.readTree(text(message));
    }

    static String text(MessageOrBuilder message) {
        try {
            return PROTO.print(message);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print " + message.getClass().getSimpleName(), e);
        }
    }

    /** Maps, lists, records and trees; messages inside must already be trees. */
    static String write(Object value) {
        return JSON.writeValueAsString(value);
    }

    private static final class HtmlEscapes extends CharacterEscapes {
        private static final long serialVersionUID = 1L;
        private final int[] codes = standardAsciiEscapesForJSON();

        HtmlEscapes() {
            for (char c : "<>&'".toCharArray()) {
                codes[c] = ESCAPE_STANDARD;
            }
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return codes;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return null;
        }
    }
}
