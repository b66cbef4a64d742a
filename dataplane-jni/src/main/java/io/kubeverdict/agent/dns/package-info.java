// SPDX-License-Identifier: Apache-2.0
/**
 * Egress to domain names: DNS responses to pods with domain-name rules are queued, parsed without
 * allocating ({@link io.kubeverdict.agent.dns.DnsResponseParser}), and the addresses they carry
 * for watched names are learned ({@link io.kubeverdict.agent.dns.LearnedAddressBook}) before the
 * response is accepted, so the pod's first connection to them is already allowed.
 */
package io.kubeverdict.agent.dns;
