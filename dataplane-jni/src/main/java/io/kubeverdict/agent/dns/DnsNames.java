// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

/** DNS names as operators see them. Pure. */
public final class DnsNames {
    private DnsNames() {}

    /**
     * The name as text safe for terminals and logs: printable ASCII other than the backslash kept,
     * every other byte (control bytes, escape sequences, non-ASCII) written as RFC 1035's
     * {@code \DDD} (decimal), so an attacker-chosen name cannot drive an operator's terminal.
     */
    public static String printable(byte[] name) {
        StringBuilder s = new StringBuilder(name.length);
        for (byte b : name) {
            int c = b & 0xff;
            if (c > 0x20 && c < 0x7f && c != '\\') {
                s.append((char) c);
            } else {
                s.append('\\')
                        .append((char) ('0' + c / 100))
                        .append((char) ('0' + c / 10 % 10))
                        .append((char) ('0' + c % 10));
            }
        }
        return s.toString();
    }
}
