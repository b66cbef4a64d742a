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

    /**
     * Makes {@code NFQUEUE --queue-num queueNum [--queue-bypass]} the only rule of the chain.
     *
     * @throws NativeException ENOENT when the table/chain (or the NFQUEUE target) does not exist,
     *     EOPNOTSUPP/EINVAL-like errnos when nft_compat refuses the family
     */
    public static void install(int family, String table, String chain, int queueNum, boolean bypass) {
        NativeLibrary.ensureAvailable();
        if (queueNum < 0 || queueNum > 65535) {
            throw new IllegalArgumentException("queue number must be 0..65535, got " + queueNum);
        }
        NativeException.check("install NFQUEUE target in " + table + "/" + chain,
                XtQueueNative.install(family, table, chain, queueNum, bypass ? 1 : 0));
    }
}
