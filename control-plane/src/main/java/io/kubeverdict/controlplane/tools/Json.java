package io.kubeverdict.controlplane.tools;

/** A minimal streaming JSON writer (compact output), enough for the tools' fixed shapes. */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean needComma;

    Json beginObject() {
        comma();
        sb.append('{');
        needComma = false;
        return this;
    }

    Json endObject() {
        sb.append('}');
        needComma = true;
        return this;
    }

    Json beginArray() {
        comma();
        sb.append('[');
        needComma = false;
        return this;
    }

    Json endArray() {
        sb.append(']');
        needComma = true;
        return this;
    }

    Json name(String name) {
        comma();
        string(name);
        sb.append(':');
        needComma = false;
        return this;
    }

    Json value(String v) {
        comma();
        string(v);
        needComma = true;
        return this;
    }

    Json value(long v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    Json value(boolean v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    private void comma() {
        if (needComma) {
            sb.append(',');
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
