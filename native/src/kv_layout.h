/* SPDX-License-Identifier: Apache-2.0 */
/* What Java mirrors of the shim, defined once: the batch buffer's slot layout, the verdict values
 * Java writes into it and the indices of the queue's counters (kv_nfqueue.c), and the layout of
 * the conntrack entries a dump delivers (kv_conntrack.c). NfqNative.layout exports
 * them in the order of KV_LAYOUT, and Java (io.kubeverdict.jni.NfqLayout) refuses the library
 * when any of them differs from its own constants. */
#ifndef KV_LAYOUT_H
#define KV_LAYOUT_H

#include <linux/netfilter.h>

/* One slot per packet, native byte order. */
#define KV_SLOT_SIZE 536
#define KV_SLOT_ID 0           /* u32 packet id */
#define KV_SLOT_HW_PROTOCOL 4  /* u16 hw protocol (ethertype) */
#define KV_SLOT_HOOK 6         /* u8 NF_INET_* hook */
#define KV_SLOT_VERDICT 7      /* u8 verdict, written by Java: NF_DROP, NF_ACCEPT or KV_VERDICT_HOLD */
#define KV_SLOT_COPIED 8       /* u32 bytes copied into the slot */
#define KV_SLOT_LENGTH 12      /* u32 full packet length */
#define KV_SLOT_MARK 16        /* u32 the packet's skb mark as queued; with KV_VERDICT_REPEAT_MARK, Java's new mark */
#define KV_SLOT_DATA 24        /* the packet's first KV_SLOT_DATA_BYTES bytes */
#define KV_SLOT_DATA_BYTES 512 /* the default copy range: long IPv6 extension chains fit */

/* A slot verdict: hand the packet over to the queue set with NfqNative.holdTo (the pod address guard). */
#define KV_VERDICT_HOLD 2
/* A slot verdict: NF_REPEAT with the packet's skb mark set to the slot's KV_SLOT_MARK: the packet
 * passes its hook's chain again, where a rule of our table reads the mark (the verdict cache's
 * tag), adds the connection's key and accepts. Never part of a batch verdict. */
#define KV_VERDICT_REPEAT_MARK 3

_Static_assert(KV_SLOT_LENGTH + 4 <= KV_SLOT_MARK, "slot header fields overlap");
_Static_assert(KV_SLOT_MARK + 4 <= KV_SLOT_DATA, "slot header overlaps the data");
_Static_assert(KV_SLOT_DATA + KV_SLOT_DATA_BYTES <= KV_SLOT_SIZE, "slot data overflows the slot");

/* Counters of one queue, read by NfqNative.stat(handle, index). */
enum kv_nfq_stat {
	KV_STAT_RECEIVED,
	KV_STAT_ENOBUFS,
	KV_STAT_SKIPPED,
	KV_STAT_VERDICT_MSGS,
	KV_STAT_NL_ERRORS,
	KV_STAT_REPEATED,
	KV_STAT_COUNT
};

/* One conntrack entry of a dump, native byte order except the addresses (network order, IPv4 in
 * the first 4 of 16 bytes). Ports are the tuple's; for ICMP/ICMPv6 the original source port holds
 * the echo id and the original destination port type << 8 | code. */
#define KV_CT_ENTRY_SIZE 80
#define KV_CT_FAMILY 0       /* u8 4 or 6 */
#define KV_CT_PROTOCOL 1     /* u8 IP protocol */
#define KV_CT_ZONE 2         /* u16 conntrack zone */
#define KV_CT_TCP_STATE 4    /* u8 TCP_CONNTRACK_*, 0xff when not TCP */
#define KV_CT_HAS_PORTS 5    /* u8 1 when the tuples carry ports (TCP, UDP, SCTP, ...) */
#define KV_CT_ORIG_SPORT 8   /* u16 */
#define KV_CT_ORIG_DPORT 10  /* u16 */
#define KV_CT_REPLY_SPORT 12 /* u16: the destination port after DNAT */
#define KV_CT_REPLY_DPORT 14 /* u16 */
#define KV_CT_MARK 16        /* u32 */
#define KV_CT_ID 20          /* u32 the kernel's id of the entry */
#define KV_CT_STATUS 24      /* u32 IPS_* bits */
#define KV_CT_ORIG_SRC 32    /* 16 bytes: who opened the connection */
#define KV_CT_ORIG_DST 48    /* 16 bytes: where it was sent (before DNAT) */
#define KV_CT_REPLY_SRC 64   /* 16 bytes: who answers, i.e. the destination after DNAT */

_Static_assert(KV_CT_REPLY_SRC + 16 <= KV_CT_ENTRY_SIZE, "conntrack entry overflows");

/* What a conntrack dump filters on besides family and mark. */
enum kv_ct_match {
	KV_CT_MATCH_ANY,
	KV_CT_MATCH_ORIG_SRC,
	KV_CT_MATCH_REPLY_SRC
};

/* The exported constants, in export order; Java names each the same. Append only. Wrapped by hand:
 * clang-format would stair-step the list. */
/* clang-format off */
#define KV_LAYOUT(X)                                                                               \
	X(KV_SLOT_SIZE) X(KV_SLOT_ID) X(KV_SLOT_HW_PROTOCOL) X(KV_SLOT_HOOK) X(KV_SLOT_VERDICT)    \
	X(KV_SLOT_COPIED) X(KV_SLOT_LENGTH) X(KV_SLOT_DATA) X(KV_SLOT_DATA_BYTES) X(NF_DROP)       \
	X(NF_ACCEPT) X(KV_VERDICT_HOLD) X(KV_STAT_RECEIVED) X(KV_STAT_ENOBUFS) X(KV_STAT_SKIPPED)  \
	X(KV_STAT_VERDICT_MSGS) X(KV_STAT_NL_ERRORS) X(KV_STAT_REPEATED) X(KV_CT_ENTRY_SIZE)       \
	X(KV_CT_FAMILY) X(KV_CT_PROTOCOL) X(KV_CT_ZONE) X(KV_CT_TCP_STATE) X(KV_CT_HAS_PORTS)      \
	X(KV_CT_ORIG_SPORT) X(KV_CT_ORIG_DPORT) X(KV_CT_REPLY_SPORT) X(KV_CT_REPLY_DPORT)          \
	X(KV_CT_MARK) X(KV_CT_ID) X(KV_CT_STATUS) X(KV_CT_ORIG_SRC) X(KV_CT_ORIG_DST)              \
	X(KV_CT_REPLY_SRC) X(KV_CT_MATCH_ANY) X(KV_CT_MATCH_ORIG_SRC) X(KV_CT_MATCH_REPLY_SRC)     \
	X(KV_SLOT_MARK) X(KV_VERDICT_REPEAT_MARK)
/* clang-format on */

#endif
