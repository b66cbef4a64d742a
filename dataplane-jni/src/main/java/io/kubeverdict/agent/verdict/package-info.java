// SPDX-License-Identifier: Apache-2.0
/**
 * The NFQUEUE verdict loops, the pod address guard's hold loop, and what they report.
 *
 * <p>How the agent wires the data plane (all on the host network namespace; nft calls on one
 * thread):
 * <pre>{@code
 * Nftables nft = new Nftables();
 * NftManager nftm = NftManager.create(nft, RulesetConfig.DEFAULT_TABLE, queueId, failOpen, null); // null: probe path
 * NfQueue queue = new NfQueue(queueId, NfQueue.FLAG_GSO | (failOpen ? NfQueue.FLAG_FAIL_OPEN : 0));
 * Judge judge = new ObservedJudge(stateHolder, ...);   // reads the holder's current generation per packet
 * VerdictLoop loop = new VerdictLoop(queue, 64, judge, observer, failOpen); // failOpen: if the judge throws
 * loop.holdTo(holdQueueId, failOpen);           // packets the judge answers HOLD go there
 * boolean leftover = nftm.start(addresses);            // at the first enforced state
 * ... stateHolder.swap(next); nftm.update(nextAddresses); // on every applied change: the judge stays
 * ... loop.close(); queue.close(); nft.close();        // shutdown: the table stays (fail mode applies)
 * }</pre>
 * Bind the queue (and start the loop) before {@code start} so no first packet waits for a
 * listener; {@link io.kubeverdict.agent.verdict.QueueCounters} reads the kernel's counters of the
 * queue for metrics. {@link io.kubeverdict.agent.verdict.VerdictLoop#judge} swaps the judge itself
 * (tests that judge with a bare index do).
 */
package io.kubeverdict.agent.verdict;
