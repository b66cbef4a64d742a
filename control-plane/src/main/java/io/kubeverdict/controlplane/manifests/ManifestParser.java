// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonPointer;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.util.JsonParserDelegate;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLParser;

/**
 * Turns one manifest file's bytes into document trees, strictly: the bytes must be UTF-8 (a
 * leading byte order mark is dropped), "*.json" files must be JSON (no trailing commas or
 * comments; several top-level values allowed), other files YAML (several documents). Duplicate
 * keys, YAML aliases (Jackson would read "*name" as the string "name"; refusing them also
 * refuses alias bombs) and anything over the {@link ParserLimits} are errors. Any error is
 * thrown as a {@link ManifestLoadException} naming file, line, column and document.
 */
final class ManifestParser {
    /**
     * A non-empty document: where it starts, its tree, its index among all the file's documents,
     * and where each element of its top-level "items" list starts (a List's objects).
     */
    record Document(Origin origin, JsonNode tree, int streamIndex, List<Origin> items) {}

    /** A parsed file; the text is kept to locate fields of its documents when binding them fails. */
    record ParsedFile(String file, String text, boolean json, List<Document> documents) {}

    private final ObjectMapper yaml;
    private final ObjectMapper json;
    private final int maxFileChars;

    ManifestParser(ParserLimits limits) {
        maxFileChars = limits.maxFileChars();
        StreamReadConstraints constraints = StreamReadConstraints.builder()
                .maxNestingDepth(limits.maxNestingDepth())
                .maxDocumentLength(limits.maxFileChars())
                .maxStringLength(limits.maxStringChars())
                .build();
        YAMLFactory yamlFactory = YAMLFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(constraints)
                .loadSettings(LoadSettings.builder()
                        .setCodePointLimit(limits.maxFileChars())
                        .build())
                .build();
        yaml = YAMLMapper.builder(yamlFactory).build();
        JsonFactory jsonFactory = JsonFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(constraints)
                .build();
        json = JsonMapper.builder(jsonFactory).build();
    }

    ParsedFile parse(String file, byte[] bytes) throws ManifestLoadException {
        String text = decodeUtf8(file, bytes);
        if (text.length() > maxFileChars) {
            throw new ManifestLoadException(new ManifestProblem(
                    new Origin(file, 0, 1, 1),
                    "the file has " + text.length() + " characters, more than the limit of " + maxFileChars));
        }
        boolean isJson = file.endsWith(".json");
        ObjectReader reader = (isJson ? json : yaml)
                .readerFor(JsonNode.class)
                .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        List<Document> docs = new ArrayList<>();
        int streamIndex = 0;
        try (JsonParser p = parser(isJson, text)) {
            try {
                while (p.nextToken() != null) {
                    TokenStreamLocation start = p.currentTokenLocation();
                    int number = docs.size() + 1;
                    List<Origin> items = new ArrayList<>();
                    JsonNode tree = readDocument(p, reader, file, number, items);
                    if (tree != null && !tree.isNull()) {
                        docs.add(new Document(
                                new Origin(file, number, line(start), column(start)),
                                tree,
                                streamIndex,
                                List.copyOf(items)));
                    }
                    streamIndex++;
                }
            } catch (JacksonException e) {
                throw new ManifestLoadException(syntaxError(file, docs.size() + 1, p, e));
            }
        }
        return new ParsedFile(file, text, isJson, List.copyOf(docs));
    }

    /**
     * Reads the document at the parser's current token. A top-level object is read member by
     * member so that the start of each element of its "items" list is known without searching.
     */
    private static JsonNode readDocument(
            JsonParser p, ObjectReader reader, String file, int number, List<Origin> items) {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            return reader.readValue(p);
        }
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        while (p.nextToken() == JsonToken.PROPERTY_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            if (name.equals("items") && value == JsonToken.START_ARRAY) {
                ArrayNode list = root.putArray(name);
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    TokenStreamLocation at = p.currentTokenLocation();
                    items.add(new Origin(file, number, line(at), column(at)));
                    JsonNode item = reader.readValue(p);
                    list.add(item == null ? JsonNodeFactory.instance.nullNode() : item);
                }
            } else {
                JsonNode v = reader.readValue(p);
                root.set(name, v == null ? JsonNodeFactory.instance.nullNode() : v);
            }
        }
        return root;
    }

    /**
     * Where the value at {@code pointer} of a document starts (its key, for an object member);
     * the document's own start when it cannot be found.
     */
    Origin locate(ParsedFile f, Document d, JsonPointer pointer) {
        try (JsonParser p = parser(f.json(), f.text())) {
            for (int index = 0; p.nextToken() != null; index++) {
                if (index == d.streamIndex()) {
                    int depth = 0;
                    do {
                        JsonToken t = p.currentToken();
                        if (!t.isStructEnd()
                                && pointer.equals(p.streamReadContext().pathAsPointer())) {
                            TokenStreamLocation at = p.currentTokenLocation();
                            return new Origin(f.file(), d.origin().document(), line(at), column(at));
                        }
                        depth += t.isStructStart() ? 1 : t.isStructEnd() ? -1 : 0;
                    } while (depth > 0 && p.nextToken() != null);
                    break;
                }
                p.skipChildren();
            }
        } catch (JacksonException e) {
            // The file parsed once; if it does not now, the document's start is the best we know.
        }
        return d.origin();
    }

    private JsonParser parser(boolean isJson, String text) {
        if (isJson) {
            return json.createParser(text);
        }
        return new AliasRefusingParser((YAMLParser) yaml.createParser(text));
    }

    /** Fails on a YAML alias, which Jackson would otherwise read as the text of its anchor's name. */
    private static final class AliasRefusingParser extends JsonParserDelegate {
        private final YAMLParser yamlParser;

        AliasRefusingParser(YAMLParser p) {
            super(p);
            this.yamlParser = p;
        }

        @Override
        public JsonToken nextToken() {
            JsonToken t = super.nextToken();
            refuseAlias();
            return t;
        }

        @Override
        public String nextName() {
            String name = super.nextName();
            refuseAlias();
            return name;
        }

        private void refuseAlias() {
            if (yamlParser.isCurrentAlias()) {
                throw new StreamReadException(
                        this,
                        "YAML alias *" + yamlParser.getString() + " is not supported; write the value out",
                        yamlParser.currentTokenLocation());
            }
        }
    }

    private static ManifestProblem syntaxError(String file, int document, JsonParser p, JacksonException e) {
        Throwable cause = e.getCause();
        if (cause instanceof MarkedYamlEngineException y) {
            Optional<Mark> mark = y.getProblemMark().or(y::getContextMark);
            if (mark.isPresent()) {
                // The context says where the construct in trouble began (an unterminated quote's opening).
                Mark m = mark.get();
                String began = y.getContextMark()
                        .filter(c -> y.getProblemMark().isPresent()
                                && (c.getLine() != m.getLine() || c.getColumn() != m.getColumn()))
                        .map(c -> " (started at line " + (c.getLine() + 1) + ", column " + (c.getColumn() + 1) + ")")
                        .orElse("");
                String what = (y.getContext() == null ? "" : y.getContext() + began + ": ") + y.getProblem();
                return new ManifestProblem(
                        new Origin(
                                file,
                                document,
                                mark.get().getLine() + 1,
                                mark.get().getColumn() + 1),
                        "YAML syntax error: " + what);
            }
        }
        String what = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        // YAML finds a duplicate key once its name is the current token: point at the name, not past it.
        TokenStreamLocation at = what.startsWith("Duplicate") && p instanceof AliasRefusingParser
                ? p.currentTokenLocation()
                : e.getLocation() != null && e.getLocation().getLineNr() > 0 ? e.getLocation() : p.currentLocation();
        return new ManifestProblem(
                new Origin(file, document, line(at), column(at)),
                (p instanceof AliasRefusingParser ? "YAML: " : "JSON: ") + firstLine(what));
    }

    /** Strict UTF-8; the error names the line and column of the first byte that is not. */
    static String decodeUtf8(String file, byte[] bytes) throws ManifestLoadException {
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer chunk = CharBuffer.allocate(8192); // validation only: the text is decoded below
        CoderResult r;
        do {
            chunk.clear();
            r = decoder.decode(in, chunk, true);
        } while (r.isOverflow());
        if (!r.isError()) {
            chunk.clear();
            r = decoder.flush(chunk);
        }
        if (r.isError()) {
            int at = in.position();
            int line = 1;
            int lineStart = 0;
            for (int i = 0; i < at; i++) {
                if (bytes[i] == '\n') {
                    line++;
                    lineStart = i + 1;
                }
            }
            int column = 1;
            for (int i = lineStart; i < at; i++) {
                if ((bytes[i] & 0xC0) != 0x80) { // count characters, not continuation bytes
                    column++;
                }
            }
            throw new ManifestLoadException(new ManifestProblem(
                    new Origin(file, 0, line, column),
                    String.format(
                            "not UTF-8: byte 0x%02X cannot start or continue a character here", bytes[at] & 0xFF)));
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    private static int line(TokenStreamLocation l) {
        return Math.max(1, l.getLineNr());
    }

    private static int column(TokenStreamLocation l) {
        return Math.max(1, l.getColumnNr());
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
