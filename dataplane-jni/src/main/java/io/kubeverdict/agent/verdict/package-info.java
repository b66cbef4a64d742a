// SPDX-License-Identifier: Apache-2.0
/**
 * The NFQUEUE verdict loop and what it reports.
 *
 * <p>How the agent wires the data plane (all on the host network namespace; nft calls on one
 * thread):
 * <pre>{@code
 * Nftables nft = new Nftables();
 * NftManager nftm = NftManager.create(nft, RulesetConfig.DEFAULT_TABLE, queueId, failOpen, null); // null: probe path
 * NfQueue queue = new NfQueue(queueId, NfQueue.FLAG_GSO | (failOpen ? NfQueue.FLAG_FAIL_OPEN : 0));
 * queue.receiveBuffer(8 << 20);
 * VerdictLoop loop = new VerdictLoop(queue, 64, index::decide, observer, failOpen); // if the judge throws
 * boolean leftover = nftm.start(PodAddresses.of(selectedLocalPodIps));  // after InSync
 * ... nftm.update(PodAddresses.of(newIps)); loop.judge(newIndex::decide); // on every applied change
 * ... loop.close(); queue.close(); nft.close();          // shutdown: the table stays (fail mode applies)
 * }</pre>
 * Bind the queue (and start the loop) before {@code start} so no first packet waits for a
 * listener; {@link io.kubeverdict.agent.verdict.QueueCounters} reads the kernel's counters of the
 * queue for metrics.
 */
package io.kubeverdict.agent.verdict;
