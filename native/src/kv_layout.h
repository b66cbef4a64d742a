/* What Java mirrors of kv_nfqueue.c, defined once: the batch buffer's slot layout, the verdict
 * values Java writes into it and the indices of the queue's counters. NfqNative.layout exports
 * them in the order of KV_LAYOUT, and Java (io.kubeverdict.jni.NfqLayout) refuses the library
 * when any of them differs from its own constants. */
#ifndef KV_LAYOUT_H
#define KV_LAYOUT_H

#include <linux/netfilter.h>

/* One slot per packet, native byte order. */
#define KV_SLOT_SIZE 144
#define KV_SLOT_ID 0            /* u32 packet id */
#define KV_SLOT_HW_PROTOCOL 4   /* u16 hw protocol (ethertype) */
#define KV_SLOT_HOOK 6          /* u8 NF_INET_* hook */
#define KV_SLOT_VERDICT 7       /* u8 verdict, written by Java: NF_DROP or NF_ACCEPT */
#define KV_SLOT_COPIED 8        /* u32 bytes copied into the slot */
#define KV_SLOT_LENGTH 12       /* u32 full packet length */
#define KV_SLOT_DATA 16         /* the packet's first KV_SLOT_DATA_BYTES bytes */
#define KV_SLOT_DATA_BYTES 128

_Static_assert(KV_SLOT_LENGTH + 4 <= KV_SLOT_DATA, "slot header overlaps the data");
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

/* The exported constants, in export order; Java names each the same. Append only. */
#define KV_LAYOUT(X)                                                                           \
	X(KV_SLOT_SIZE) X(KV_SLOT_ID) X(KV_SLOT_HW_PROTOCOL) X(KV_SLOT_HOOK) X(KV_SLOT_VERDICT)  \
	X(KV_SLOT_COPIED) X(KV_SLOT_LENGTH) X(KV_SLOT_DATA) X(KV_SLOT_DATA_BYTES) X(NF_DROP)     \
	X(NF_ACCEPT) X(KV_STAT_RECEIVED) X(KV_STAT_ENOBUFS) X(KV_STAT_SKIPPED)                   \
	X(KV_STAT_VERDICT_MSGS) X(KV_STAT_NL_ERRORS) X(KV_STAT_REPEATED)

#endif
