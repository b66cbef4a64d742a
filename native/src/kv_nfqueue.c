/* SPDX-License-Identifier: Apache-2.0 */
/* NFQUEUE over libmnl with libnetfilter_queue's message helpers: open a netlink socket,
 * bind one queue (header-only copy, GSO, optional fail-open), receive packets in batches into
 * fixed-size slots of a buffer Java owns (its address is passed once, by attach), and send the
 * verdicts Java wrote into those slots back in one sendmsg. A batch costs two system calls, as
 * the plainest consumer's packet does: one recvmmsg (waits for the first datagram, takes what
 * else is queued) and one sendmsg.
 * The slot layout, verdict values and counter indices Java mirrors are in kv_layout.h. */
#define _GNU_SOURCE /* recvmmsg */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "kv_layout.h"
#include "kv_netlink.h"
#include "kv_shim.h"

#define KV_RECV_BUF (64 * 1024) /* one datagram: the largest packet message netlink sends */
#define KV_MMSG 32              /* datagrams one receive takes at most */
#define KV_VERDICT_MSG 64       /* room for one verdict message, generously */
#define KV_CONFIG_WAITS 50      /* receive timeouts a config ack may take (with the loop's timeout set) */

struct kv_queue {
	struct mnl_socket *nl;
	unsigned int portid;
	uint16_t queue_num;
	uint32_t seq; /* of config messages */
	/* batch state, set by attach */
	unsigned char *slots;
	int slot_count;
	int slot_size;  /* KV_SLOT_SIZE, or KV_SLOT_DATA + data_bytes (8-aligned) for sized batches */
	int data_bytes; /* at most this many packet bytes per slot */
	char *rbuf;     /* vlen datagrams of KV_RECV_BUF each, filled by one recvmmsg */
	struct mmsghdr *mm;
	struct iovec *iov;
	int vlen;
	int got; /* datagrams of the last recvmmsg; next: the first not yet parsed */
	int next;
	const char *pend; /* the datagram being parsed; pend_off/pend_len: what is not parsed yet */
	int pend_off;
	int pend_len;
	int timeout_ms;            /* SO_RCVTIMEO as last set; -1: never set (blocking) */
	char *sbuf;                /* verdict messages of one batch */
	unsigned int hold_verdict; /* what KV_VERDICT_HOLD sends: NF_QUEUE_NR(hold queue) [| bypass]; 0: none */
	uint64_t stats[KV_STAT_COUNT];
};

/* A packet that reached the socket while we (re)configured the queue, before the ack: answer
 * NF_REPEAT so it passes the hook again and comes back under the final configuration (with its
 * header copied) instead of waiting in the queue forever. */
static void kv_nfq_repeat(struct kv_queue *q, const struct nlmsghdr *m)
{
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	if (m->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET) || nfq_nlmsg_parse(m, attr) < 0 ||
	    attr[NFQA_PACKET_HDR] == NULL)
		return;
	const struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	char buf[KV_VERDICT_MSG * 2];
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, q->queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)ntohl(ph->packet_id), NF_REPEAT);
	if (kv_nl_send(q->nl, nlh, nlh->nlmsg_len) >= 0)
		q->stats[KV_STAT_REPEATED]++;
}

/* Sends one config message and waits for the kernel's ack to it (matched by sequence number).
 * Packet messages may reach the socket first, each as large as the queue's copy (whole DNS
 * responses: more than a page), so the wait receives into a buffer that takes any datagram a
 * queue of ours sends (kv_nfq_open bounds the copy), not a page-sized one (security audit L4). */
static int kv_nfq_send_config(struct kv_queue *q, struct nlmsghdr *nlh)
{
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++q->seq;
	if (kv_nl_send(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	char *buf = malloc(KV_RECV_BUF);
	if (buf == NULL)
		return -ENOMEM;
	int rc = 1;
	int waits = 0;
	while (rc > 0) {
		ssize_t n = kv_nl_recv(q->nl, buf, KV_RECV_BUF);
		if (n < 0) {
			/* EAGAIN: the receive timeout the batch loop set ran out; the ack is still due.
			 * ENOSPC (libmnl: a datagram cut short) is never the small ack: skip it. */
			if (errno == ENOSPC)
				q->stats[KV_STAT_SKIPPED]++;
			else if (errno != ENOBUFS &&
				 !((errno == EAGAIN || errno == EWOULDBLOCK) && ++waits < KV_CONFIG_WAITS))
				rc = -errno;
			continue;
		}
		const struct nlmsghdr *m = (const struct nlmsghdr *)buf;
		int len = (int)n;
		for (; rc > 0 && mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_type == NLMSG_ERROR && m->nlmsg_seq == q->seq) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);
				rc = e->error; /* 0: ack; otherwise already -errno */
			} else {
				kv_nfq_repeat(q, m);
			}
		}
	}
	free(buf);
	return rc;
}

static void kv_nfq_free(struct kv_queue *q)
{
	if (q->nl)
		mnl_socket_close(q->nl);
	free(q->rbuf);
	free(q->mm);
	free(q->iov);
	free(q->sbuf);
	free(q);
}

/* Opens a socket and binds queue_num. flags: NFQA_CFG_F_* (GSO, FAIL_OPEN). max_len: how many
 * packets may wait for a verdict (NFQA_CFG_QUEUE_MAXLEN); beyond it the kernel drops new ones, or
 * accepts them with FAIL_OPEN. */
static jlong kv_nfq_open(JNIEnv *env, jclass cls, jint queue_num, jint copy_bytes, jint flags, jint max_len)
{
	(void)env;
	(void)cls;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	if (max_len <= 0 || copy_bytes < 0 || copy_bytes > KV_RECV_BUF - 1024) /* a packet message fits KV_RECV_BUF */
		return -EINVAL;
	struct kv_queue *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	q->queue_num = (uint16_t)queue_num;
	q->timeout_ms = -1;
	q->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (q->nl == NULL || mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;
		kv_nfq_free(q);
		return err;
	}
	q->portid = mnl_socket_get_portid(q->nl);

	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue_num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_BIND);
	int rc = kv_nfq_send_config(q, nlh);
	if (rc == 0) {
		nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue_num);
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, copy_bytes);
		mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl((uint32_t)flags));
		mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl((uint32_t)flags));
		nfq_nlmsg_cfg_put_qmaxlen(nlh, (uint32_t)max_len);
		rc = kv_nfq_send_config(q, nlh);
	}
	if (rc < 0) {
		kv_nfq_free(q);
		return rc;
	}
	return KV_HANDLE(q);
}

static jint kv_nfq_close(JNIEnv *env, jclass cls, jlong handle)
{
	(void)env;
	(void)cls;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct kv_queue *q = KV_PTR(handle);
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue_num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_UNBIND);
	int rc = kv_nfq_send_config(q, nlh);
	kv_nfq_free(q);
	return rc;
}

static jint kv_nfq_fd(JNIEnv *env, jclass cls, jlong handle)
{
	(void)env;
	(void)cls;
	return mnl_socket_get_fd(((struct kv_queue *)KV_PTR(handle))->nl);
}

/* Asks for a large receive buffer so bursts wait in the socket instead of being dropped
 * (SO_RCVBUFFORCE needs CAP_NET_ADMIN, which we have; plain SO_RCVBUF as a fallback).
 * Returns the size the kernel granted. */
static jint kv_nfq_rcvbuf(JNIEnv *env, jclass cls, jlong handle, jint bytes)
{
	(void)env;
	(void)cls;
	int fd = mnl_socket_get_fd(((struct kv_queue *)KV_PTR(handle))->nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		return -errno;
	int granted = 0;
	socklen_t len = sizeof(granted);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len) < 0)
		return -errno;
	return granted;
}

_Static_assert(((KV_SLOT_DATA + KV_SLOT_DATA_BYTES + 7) & ~7) == KV_SLOT_SIZE, "default slots are KV_SLOT_SIZE");

/* The slot stride for data_bytes of packet per slot. */
static int kv_nfq_slot_size(int data_bytes)
{
	return (KV_SLOT_DATA + data_bytes + 7) & ~7;
}

/* Remembers Java's slot buffer (a direct buffer's address, passed once) and allocates the
 * receive and verdict buffers for batches of up to slot_count packets of up to data_bytes each
 * (the buffer holds slot_count slots of KV_SLOT_DATA + data_bytes, rounded up to 8). */
static jint kv_nfq_attach_sized(JNIEnv *env, jclass cls, jlong handle, jlong address, jint slot_count, jint data_bytes)
{
	(void)env;
	(void)cls;
	struct kv_queue *q = KV_PTR(handle);
	/* a whole packet message (headers + data) must fit one receive buffer */
	if (address == 0 || slot_count <= 0 || q->slots != NULL || data_bytes < KV_SLOT_DATA_BYTES ||
	    data_bytes > KV_RECV_BUF - 1024)
		return -EINVAL;
	int vlen = slot_count < KV_MMSG ? slot_count : KV_MMSG;
	/* untouched pages of rbuf are never backed: a datagram writes only its own length */
	char *rbuf = malloc((size_t)vlen * KV_RECV_BUF);
	struct mmsghdr *mm = calloc((size_t)vlen, sizeof(*mm));
	struct iovec *iov = calloc((size_t)vlen, sizeof(*iov));
	char *sbuf = malloc((size_t)slot_count * KV_VERDICT_MSG);
	if (rbuf == NULL || mm == NULL || iov == NULL || sbuf == NULL) {
		/* keep none: q stays unattached, and a later attach would otherwise leak the first */
		free(rbuf);
		free(mm);
		free(iov);
		free(sbuf);
		return -ENOMEM;
	}
	for (int i = 0; i < vlen; i++) {
		iov[i].iov_base = rbuf + (size_t)i * KV_RECV_BUF;
		iov[i].iov_len = KV_RECV_BUF;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	q->rbuf = rbuf;
	q->mm = mm;
	q->iov = iov;
	q->vlen = vlen;
	q->sbuf = sbuf;
	q->slots = KV_PTR(address);
	q->slot_count = slot_count;
	q->slot_size = kv_nfq_slot_size(data_bytes);
	q->data_bytes = data_bytes;
	return 0;
}

/* attach_sized with the layout's KV_SLOT_DATA_BYTES (slots of KV_SLOT_SIZE). */
static jint kv_nfq_attach(JNIEnv *env, jclass cls, jlong handle, jlong address, jint slot_count)
{
	return kv_nfq_attach_sized(env, cls, handle, address, slot_count, KV_SLOT_DATA_BYTES);
}

static jlong kv_nfq_stat(JNIEnv *env, jclass cls, jlong handle, jint which)
{
	(void)env;
	(void)cls;
	if (which < 0 || which >= KV_STAT_COUNT)
		return -EINVAL;
	return (jlong)((struct kv_queue *)KV_PTR(handle))->stats[which];
}

/* Copies one packet message into a slot; returns 1 when a slot was used, 0 when skipped. */
static int kv_nfq_fill_slot(struct kv_queue *q, const struct nlmsghdr *nlh, unsigned char *slot)
{
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	if (nlh->nlmsg_type == NLMSG_ERROR && nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		/* the kernel refused a verdict (e.g. an unknown id): count it, the loop goes on */
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
		q->stats[e->error != 0 ? KV_STAT_NL_ERRORS : KV_STAT_SKIPPED]++;
		return 0;
	}
	if (nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET) || nfq_nlmsg_parse(nlh, attr) < 0 ||
	    attr[NFQA_PACKET_HDR] == NULL) {
		q->stats[KV_STAT_SKIPPED]++;
		return 0;
	}
	const struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	uint32_t id = ntohl(ph->packet_id);
	uint16_t hw = ntohs(ph->hw_protocol);
	uint32_t copied = 0, length = 0;
	if (attr[NFQA_PAYLOAD] != NULL) {
		length = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
		copied = length < (uint32_t)q->data_bytes ? length : (uint32_t)q->data_bytes;
		memcpy(slot + KV_SLOT_DATA, mnl_attr_get_payload(attr[NFQA_PAYLOAD]), copied);
	}
	if (attr[NFQA_CAP_LEN] != NULL) /* present when the kernel truncated the copy */
		length = ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN]));
	uint32_t mark = attr[NFQA_MARK] != NULL ? ntohl(mnl_attr_get_u32(attr[NFQA_MARK])) : 0; /* absent: 0 */
	memcpy(slot + KV_SLOT_MARK, &mark, 4);
	memcpy(slot + KV_SLOT_ID, &id, 4);
	memcpy(slot + KV_SLOT_HW_PROTOCOL, &hw, 2);
	slot[KV_SLOT_HOOK] = ph->hook;
	slot[KV_SLOT_VERDICT] = NF_DROP;
	memcpy(slot + KV_SLOT_COPIED, &copied, 4);
	memcpy(slot + KV_SLOT_LENGTH, &length, 4);
	q->stats[KV_STAT_RECEIVED]++;
	return 1;
}

/* Sets how long a receive waits for its first datagram (SO_RCVTIMEO), only when it changed. */
static int kv_nfq_wait_at_most(struct kv_queue *q, int fd, int timeout_ms)
{
	if (q->timeout_ms == timeout_ms)
		return 0;
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	q->timeout_ms = timeout_ms;
	return 0;
}

/* Receives the datagrams that are queued, waiting up to timeout_ms (0: not at all; negative:
 * until one comes) for the first. Returns how many, 0 after a quiet wait, or -errno. */
static int kv_nfq_recv_datagrams(struct kv_queue *q, int timeout_ms)
{
	int fd = mnl_socket_get_fd(q->nl);
	int flags = MSG_WAITFORONE;
	if (timeout_ms == 0) {
		flags |= MSG_DONTWAIT;
	} else {
		int rc = kv_nfq_wait_at_most(q, fd, timeout_ms < 0 ? 0 : timeout_ms); /* 0 s: no timeout */
		if (rc < 0)
			return rc;
	}
	int n = recvmmsg(fd, q->mm, (unsigned int)q->vlen, flags, NULL);
	if (n >= 0)
		return n;
	if (errno == ENOBUFS) {
		q->stats[KV_STAT_ENOBUFS]++; /* some packets were lost to us; the next call goes on */
		return 0;
	}
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	return -errno;
}

/* Fills up to slot_count slots. Waits up to timeout_ms for the first packet (so a loop can
 * notice it should stop), and takes whatever else was already queued in the same system call.
 * Returns the number of slots filled (0 on timeout) or -errno. ENOBUFS (the kernel could not
 * hand us some packets; it counts them as user-dropped or let them pass when fail-open) is
 * counted, not fatal. Datagrams (or messages of one) beyond the free slots wait for the next call. */
static jint kv_nfq_receive(JNIEnv *env, jclass cls, jlong handle, jint timeout_ms)
{
	(void)env;
	(void)cls;
	struct kv_queue *q = KV_PTR(handle);
	if (q->slots == NULL)
		return -EINVAL;
	if (q->pend_len == 0 && q->next >= q->got) {
		int n = kv_nfq_recv_datagrams(q, timeout_ms);
		if (n <= 0)
			return n;
		q->got = n;
		q->next = 0;
	}
	int filled = 0;
	while (filled < q->slot_count) {
		if (q->pend_len == 0) {
			if (q->next >= q->got)
				break;
			struct mmsghdr *m = &q->mm[q->next];
			q->pend = q->rbuf + (size_t)q->next * KV_RECV_BUF;
			q->next++;
			q->pend_off = 0;
			q->pend_len = (int)m->msg_len;
			/* cannot happen with KV_RECV_BUF; never parse a cut one */
			if (m->msg_hdr.msg_flags & MSG_TRUNC) {
				q->stats[KV_STAT_SKIPPED]++;
				q->pend_len = 0;
			}
			continue;
		}
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(q->pend + q->pend_off);
		int len = q->pend_len;
		while (filled < q->slot_count && mnl_nlmsg_ok(nlh, len)) {
			filled += kv_nfq_fill_slot(q, nlh, q->slots + (size_t)filled * (size_t)q->slot_size);
			nlh = mnl_nlmsg_next(nlh, &len);
		}
		/* keep what is left for the next call; a tail that is no message is padding */
		q->pend_off = (int)((const char *)nlh - q->pend);
		q->pend_len = mnl_nlmsg_ok(nlh, len) ? len : 0;
	}
	return filled;
}

static size_t kv_nfq_put_verdict(struct kv_queue *q, char *at, int type, uint32_t id, int verdict)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(at, type, q->queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
	return MNL_ALIGN(nlh->nlmsg_len);
}

/* NF_REPEAT for one packet, setting its skb mark (NFQA_MARK replaces the whole mark: Java passes
 * the queued mark with its own bits added). */
static size_t kv_nfq_put_marked_repeat(struct kv_queue *q, char *at, uint32_t id, uint32_t mark)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(at, NFQNL_MSG_VERDICT, q->queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)id, NF_REPEAT);
	nfq_nlmsg_verdict_put_mark(nlh, mark);
	return MNL_ALIGN(nlh->nlmsg_len);
}

/* Sends the verdicts of slots 0..count-1 in one sendmsg. A run of consecutive slots sharing a
 * verdict becomes one NFQNL_MSG_VERDICT_BATCH for the run's last id: the kernel applies it to
 * every packet still queued with an id up to that one, which are exactly the run's packets
 * because all earlier slots got their verdict in earlier messages of the same datagram, and
 * ids missing between slots belong to packets the kernel never queued. Single slots get a
 * plain NFQNL_MSG_VERDICT. Verdicts are NF_DROP (0), NF_ACCEPT (1), KV_VERDICT_HOLD (2, only
 * once a hold queue is set): the kernel moves a held packet to that queue, where it waits for
 * its verdict from kv_nfq_verdict_one, or KV_VERDICT_REPEAT_MARK (3): a plain NF_REPEAT with
 * NFQA_MARK (the slot's KV_SLOT_MARK), always a message of its own, so runs stay exact. */
static jint kv_nfq_verdict(JNIEnv *env, jclass cls, jlong handle, jint count)
{
	(void)env;
	(void)cls;
	struct kv_queue *q = KV_PTR(handle);
	if (q->slots == NULL || count < 0 || count > q->slot_count)
		return -EINVAL;
	for (int i = 0; i < count; i++) {
		int v = q->slots[(size_t)i * (size_t)q->slot_size + KV_SLOT_VERDICT];
		if (v > NF_ACCEPT && v != KV_VERDICT_REPEAT_MARK && !(v == KV_VERDICT_HOLD && q->hold_verdict != 0))
			return -EINVAL;
	}
	size_t off = 0;
	int messages = 0;
	for (int i = 0; i < count;) {
		const unsigned char *slot = q->slots + (size_t)i * (size_t)q->slot_size;
		int verdict = slot[KV_SLOT_VERDICT];
		if (verdict == KV_VERDICT_REPEAT_MARK) {
			uint32_t id, mark;
			memcpy(&id, slot + KV_SLOT_ID, 4);
			memcpy(&mark, slot + KV_SLOT_MARK, 4);
			off += kv_nfq_put_marked_repeat(q, q->sbuf + off, id, mark);
			messages++;
			i++;
			continue;
		}
		int j = i;
		while (j + 1 < count && q->slots[(size_t)(j + 1) * (size_t)q->slot_size + KV_SLOT_VERDICT] == verdict)
			j++;
		uint32_t id;
		memcpy(&id, q->slots + (size_t)j * (size_t)q->slot_size + KV_SLOT_ID, 4);
		off += kv_nfq_put_verdict(q, q->sbuf + off, j > i ? NFQNL_MSG_VERDICT_BATCH : NFQNL_MSG_VERDICT, id,
					  verdict == KV_VERDICT_HOLD ? (int)q->hold_verdict : verdict);
		messages++;
		i = j + 1;
	}
	if (off == 0)
		return 0;
	if (kv_nl_send(q->nl, q->sbuf, off) < 0)
		return -errno;
	q->stats[KV_STAT_VERDICT_MSGS] += (uint64_t)messages;
	return messages;
}

/* Where KV_VERDICT_HOLD sends packets from now on: queue_num, with the kernel's bypass flag when
 * bypass is set (accepted if nothing listens on it, as a fail-open queue rule). */
static jint kv_nfq_hold_to(JNIEnv *env, jclass cls, jlong handle, jint queue_num, jboolean bypass)
{
	(void)env;
	(void)cls;
	struct kv_queue *q = KV_PTR(handle);
	if (queue_num < 0 || queue_num > 65535 || (unsigned int)queue_num == q->queue_num)
		return -EINVAL;
	q->hold_verdict = NF_QUEUE_NR((unsigned int)queue_num) | (bypass ? NF_VERDICT_FLAG_QUEUE_BYPASS : 0);
	return 0;
}

/* One plain verdict (NF_DROP or NF_ACCEPT) for one packet id: for packets answered one by one,
 * out of order, long after they came (the held ones); never a batch, which would cover the others. */
static jint kv_nfq_verdict_one(JNIEnv *env, jclass cls, jlong handle, jint id, jint verdict)
{
	(void)env;
	(void)cls;
	struct kv_queue *q = KV_PTR(handle);
	if (verdict != NF_DROP && verdict != NF_ACCEPT)
		return -EINVAL;
	char buf[KV_VERDICT_MSG];
	size_t len = kv_nfq_put_verdict(q, buf, NFQNL_MSG_VERDICT, (uint32_t)id, verdict);
	if (kv_nl_send(q->nl, buf, len) < 0)
		return -errno;
	q->stats[KV_STAT_VERDICT_MSGS]++;
	return 1;
}

static jlong kv_nfq_address(JNIEnv *env, jclass cls, jobject buffer)
{
	(void)cls;
	void *address = (*env)->GetDirectBufferAddress(env, buffer);
	return address == NULL ? -EINVAL : KV_HANDLE(address);
}

/* Copies kv_layout.h's constants into out (as many as fit) and returns how many there are, so
 * Java can check its mirror of them; out may be null to ask only for the count. */
static jint kv_nfq_layout(JNIEnv *env, jclass cls, jintArray out)
{
	(void)cls;
#define KV_LAYOUT_VALUE(name) name,
	static const jint values[] = { KV_LAYOUT(KV_LAYOUT_VALUE) };
#undef KV_LAYOUT_VALUE
	jsize count = (jsize)(sizeof(values) / sizeof(values[0]));
	if (out != NULL) {
		jsize room = (*env)->GetArrayLength(env, out);
		(*env)->SetIntArrayRegion(env, out, 0, room < count ? room : count, values);
	}
	return count;
}

static const JNINativeMethod methods[] = {
	{ "open", "(IIII)J", (void *)kv_nfq_open },
	{ "close", "(J)I", (void *)kv_nfq_close },
	{ "fd", "(J)I", (void *)kv_nfq_fd },
	{ "rcvbuf", "(JI)I", (void *)kv_nfq_rcvbuf },
	{ "attach", "(JJI)I", (void *)kv_nfq_attach },
	{ "attachSized", "(JJII)I", (void *)kv_nfq_attach_sized },
	{ "stat", "(JI)J", (void *)kv_nfq_stat },
	{ "receive", "(JI)I", (void *)kv_nfq_receive },
	{ "verdict", "(JI)I", (void *)kv_nfq_verdict },
	{ "holdTo", "(JIZ)I", (void *)kv_nfq_hold_to },
	{ "verdictOne", "(JII)I", (void *)kv_nfq_verdict_one },
	{ "address", "(Ljava/nio/ByteBuffer;)J", (void *)kv_nfq_address },
	{ "layout", "([I)I", (void *)kv_nfq_layout },
};

int kv_register_nfqueue(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/NfqNative", methods, sizeof(methods) / sizeof(methods[0]));
}
