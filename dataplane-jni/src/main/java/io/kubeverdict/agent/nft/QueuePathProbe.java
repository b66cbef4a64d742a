// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Nftables;
import io.kubeverdict.jni.NftablesException;

/**
 * Finds out once whether this kernel has the nft {@code queue} expression: tries a queue rule in a
 * scratch table of ours and removes the table again. Kernels without nft_queue answer ENOENT
 * ("No such file or directory"); then the xtables NFQUEUE target is used.
 */
public final class QueuePathProbe {
    private QueuePathProbe() {}

    public static QueuePath detect(Nftables nft, String table) {
        String scratch = table + "_probe";
        nft.run("add table inet " + scratch + "\ndelete table inet " + scratch + "\n");
        try {
            nft.run("add table inet " + scratch + "\n"
                    + "add chain inet " + scratch + " c\n"
                    + "add rule inet " + scratch + " c queue num 0 bypass\n");
            return QueuePath.NFT_QUEUE;
        } catch (NftablesException e) {
            if (e.nftError() != null && e.nftError().contains("No such file or directory")) {
                return QueuePath.XT_NFQUEUE;
            }
            throw e;
        } finally {
            nft.run("add table inet " + scratch + "\ndelete table inet " + scratch + "\n");
        }
    }
}
