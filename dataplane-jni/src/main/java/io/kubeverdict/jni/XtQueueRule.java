// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * The xtables NFQUEUE target (revision 3) as the only rule of a chain in one of our own nftables
 * tables, added through nft_compat for kernels without the nft {@code queue} expression. nft's
 * text cannot express xtables targets, so the shim builds this one rule with libnftnl; in one
 * netlink transaction it removes every rule of the chain (the ruleset text leaves a placeholder
 * there) and appends the target. Like {@link Nftables}, it acts in the network namespace of the
 * calling thread.
 */
public final class XtQueueRule {
    /** nftables families (NFPROTO_*). */
    public static final int FAMILY_INET = 1;

    public static final int FAMILY_IPV4 = 2;
    public static final int FAMILY_IPV6 = 10;

    private XtQueueRule() {}

    /** One queue: {@code NFQUEUE --queue-num queueNum [--queue-bypass]}. */
    public static void install(int family, String table, String chain, int queueNum, boolean bypass) {
        install(family, table, chain, queueNum, 1, bypass);
    }

    /**
     * Makes {@code NFQUEUE --queue-num queueNum [--queue-bypass]} (one queue) or
     * {@code NFQUEUE --queue-balance queueNum:queueNum+queues-1 --queue-cpu-fanout [--queue-bypass]}
     * the only rule of the chain. With cpu-fanout a packet goes to queue {@code queueNum + cpu % queues}
     * of the CPU that handles it, so the flows the NIC's RSS spreads over CPUs are spread over queues.
     *
     * @throws NativeException ENOENT when the table/chain (or the NFQUEUE target) does not exist,
     *     EOPNOTSUPP/EINVAL-like errnos when nft_compat refuses the family
     */
    public static void install(int family, String table, String chain, int queueNum, int queues, boolean bypass) {
        NativeLibrary.ensureAvailable();
        if (queueNum < 0 || queues < 1 || queueNum + queues - 1 > 65535) {
            throw new IllegalArgumentException("queues must lie in 0..65535, got " + queueNum + " + " + queues);
        }
        NativeException.check(
                "install NFQUEUE target in " + table + "/" + chain,
                XtQueueNative.install(family, table, chain, queueNum, queues, bypass ? 1 : 0));
    }
}
