// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.util.ArrayList;
import java.util.List;

/**
 * The numbers this package and the shim must agree on, mirrored by hand: the batch buffer's slot
 * layout, the verdict values written into it and the counter indices (kv_nfqueue.c), and the
 * layout of conntrack dump entries and the dump's match kinds (kv_conntrack.c). The
 * shim exports its values (native/src/kv_layout.h) and {@link NativeLibrary} refuses a library
 * whose values differ, so a stale or mismatched .so is reported at load instead of reading
 * packet ids from the wrong bytes.
 */
final class NfqLayout {
    /** One constant as named in kv_layout.h, with the value Java uses. */
    record Constant(String name, int value) {}

    /** In the shim's export order (KV_LAYOUT). */
    static final List<Constant> JAVA = List.of(
            new Constant("KV_SLOT_SIZE", PacketBatch.SLOT_SIZE),
            new Constant("KV_SLOT_ID", PacketBatch.ID),
            new Constant("KV_SLOT_HW_PROTOCOL", PacketBatch.HW_PROTOCOL),
            new Constant("KV_SLOT_HOOK", PacketBatch.HOOK),
            new Constant("KV_SLOT_VERDICT", PacketBatch.VERDICT),
            new Constant("KV_SLOT_COPIED", PacketBatch.COPIED),
            new Constant("KV_SLOT_LENGTH", PacketBatch.LENGTH),
            new Constant("KV_SLOT_DATA", PacketBatch.DATA_OFFSET),
            new Constant("KV_SLOT_DATA_BYTES", PacketBatch.DATA_BYTES),
            new Constant("NF_DROP", PacketBatch.NF_DROP),
            new Constant("NF_ACCEPT", PacketBatch.NF_ACCEPT),
            new Constant("KV_VERDICT_HOLD", PacketBatch.VERDICT_HOLD),
            new Constant("KV_STAT_RECEIVED", NfQueue.STAT_RECEIVED),
            new Constant("KV_STAT_ENOBUFS", NfQueue.STAT_ENOBUFS),
            new Constant("KV_STAT_SKIPPED", NfQueue.STAT_SKIPPED),
            new Constant("KV_STAT_VERDICT_MSGS", NfQueue.STAT_VERDICT_MESSAGES),
            new Constant("KV_STAT_NL_ERRORS", NfQueue.STAT_NETLINK_ERRORS),
            new Constant("KV_STAT_REPEATED", NfQueue.STAT_REPEATED),
            new Constant("KV_CT_ENTRY_SIZE", ConntrackEntries.ENTRY_SIZE),
            new Constant("KV_CT_FAMILY", ConntrackEntries.FAMILY),
            new Constant("KV_CT_PROTOCOL", ConntrackEntries.PROTOCOL),
            new Constant("KV_CT_ZONE", ConntrackEntries.ZONE),
            new Constant("KV_CT_TCP_STATE", ConntrackEntries.TCP_STATE),
            new Constant("KV_CT_HAS_PORTS", ConntrackEntries.HAS_PORTS),
            new Constant("KV_CT_ORIG_SPORT", ConntrackEntries.ORIG_SPORT),
            new Constant("KV_CT_ORIG_DPORT", ConntrackEntries.ORIG_DPORT),
            new Constant("KV_CT_REPLY_SPORT", ConntrackEntries.REPLY_SPORT),
            new Constant("KV_CT_REPLY_DPORT", ConntrackEntries.REPLY_DPORT),
            new Constant("KV_CT_MARK", ConntrackEntries.MARK),
            new Constant("KV_CT_ID", ConntrackEntries.ID),
            new Constant("KV_CT_STATUS", ConntrackEntries.STATUS),
            new Constant("KV_CT_ORIG_SRC", ConntrackEntries.ORIG_SRC),
            new Constant("KV_CT_ORIG_DST", ConntrackEntries.ORIG_DST),
            new Constant("KV_CT_REPLY_SRC", ConntrackEntries.REPLY_SRC),
            new Constant("KV_CT_MATCH_ANY", ConntrackQuery.Match.ANY.ordinal()),
            new Constant("KV_CT_MATCH_ORIG_SRC", ConntrackQuery.Match.ORIGINAL_SOURCE.ordinal()),
            new Constant("KV_CT_MATCH_REPLY_SRC", ConntrackQuery.Match.REPLY_SOURCE.ordinal()),
            new Constant("KV_SLOT_MARK", PacketBatch.MARK),
            new Constant("KV_VERDICT_REPEAT_MARK", PacketBatch.VERDICT_REPEAT_MARK));

    private NfqLayout() {}

    /** The loaded shim's constants, in its export order. */
    static int[] exported() {
        int count = NfqNative.layout(null);
        if (count < 0) {
            throw new IllegalStateException("native shim reports " + count + " layout constants");
        }
        int[] values = new int[count];
        NfqNative.layout(values);
        return values;
    }

    /** Throws unless the loaded shim's constants are Java's. Called once the library is loaded. */
    static void verifyLoaded() {
        check(JAVA, exported());
    }

    /** Throws, naming every difference, unless {@code exported} holds exactly {@code expected}'s values. */
    static void check(List<Constant> expected, int[] exported) {
        List<String> differences = differences(expected, exported);
        if (!differences.isEmpty()) {
            throw new IllegalStateException("native shim's batch layout (kv_layout.h) differs from Java's, "
                    + "the library and the jar do not come from one build: " + String.join("; ", differences));
        }
    }

    /** Every way {@code exported} differs from {@code expected}; empty when they agree. */
    static List<String> differences(List<Constant> expected, int[] exported) {
        List<String> differences = new ArrayList<>();
        if (exported.length != expected.size()) {
            differences.add("shim exports " + exported.length + " constants, Java knows " + expected.size());
        }
        for (int i = 0; i < Math.min(exported.length, expected.size()); i++) {
            Constant c = expected.get(i);
            if (exported[i] != c.value()) {
                differences.add(c.name() + ": shim " + exported[i] + ", Java " + c.value());
            }
        }
        return differences;
    }
}
