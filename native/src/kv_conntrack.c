/* SPDX-License-Identifier: Apache-2.0 */
/* Conntrack over ctnetlink: a dump the kernel filters (address family, mark under a mask, and the
 * source address of the original or of the reply tuple, via CTA_FILTER; for IPv6 the address is
 * compared here, see kv_ct_dump_start), delivered a chunk at a time into a buffer
 * Java owns as fixed-size entries (kv_layout.h), and per-entry mark updates and deletes. Requests
 * are built with libmnl (CTA_FILTER is newer than libnetfilter_conntrack 1.0.9's filter API); the
 * kernel's answers are parsed with libnetfilter_conntrack. Nothing here decides anything: Java
 * chooses what to dump and which entries to change. Functions return >= 0 or -errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "kv_layout.h"
#include "kv_netlink.h"
#include "kv_shim.h"

/* CTA_FILTER_*_FLAGS bits (the kernel's nf_internals.h: one bit per tuple attribute). */
#define KV_CT_FILTER_IP_SRC (1u << 0)

#define KV_CT_DUMP_BUF (64 * 1024)

/* Two sockets, both made by the thread that opens (so both live in its network namespace):
 * one for dumps, one for changes, so that a change never reads a dump's answers (Java marks
 * entries of a dump while it still runs). The dump under way is read a chunk at a time: its
 * received but unread messages stay in dump_buf at dump_off, dump_len bytes. */
struct kv_ct {
	struct mnl_socket *nl;
	struct mnl_socket *dump_nl;
	uint32_t seq;
	uint32_t dump_seq;
	int dumping, dump_rc, dump_intr, dump_match6, dump_off, dump_len;
	unsigned char dump_address[16];
	char dump_buf[KV_CT_DUMP_BUF];
};

static struct mnl_socket *kv_ct_socket(void)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (nl == NULL)
		return NULL;
	/* a kernel that stops answering must not hang the caller forever */
	struct timeval timeout = { .tv_sec = 10, .tv_usec = 0 };
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) < 0) {
		int err = errno;
		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	return nl;
}

static jlong kv_ct_open(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	struct kv_ct *ct = calloc(1, sizeof(*ct));
	if (ct == NULL)
		return -ENOMEM;
	ct->nl = kv_ct_socket();
	ct->dump_nl = ct->nl ? kv_ct_socket() : NULL;
	if (ct->dump_nl == NULL) {
		int err = -errno;
		if (ct->nl)
			mnl_socket_close(ct->nl);
		free(ct);
		return err;
	}
	ct->seq = (uint32_t)time(NULL);
	return KV_HANDLE(ct);
}

static jint kv_ct_close(JNIEnv *env, jclass cls, jlong handle)
{
	(void)env;
	(void)cls;
	struct kv_ct *ct = KV_PTR(handle);
	mnl_socket_close(ct->nl);
	mnl_socket_close(ct->dump_nl);
	free(ct);
	return 0;
}

static struct nlmsghdr *kv_ct_header(char *buf, int type, uint16_t flags, int af, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = (uint8_t)af;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static int kv_ct_af(int family)
{
	return family == 4 ? AF_INET : family == 6 ? AF_INET6 : -1;
}

static void kv_ct_put_address(struct nlmsghdr *nlh, int af, int type4, int type6, const unsigned char *addr)
{
	if (af == AF_INET)
		mnl_attr_put(nlh, (uint16_t)type4, 4, addr);
	else
		mnl_attr_put(nlh, (uint16_t)type6, 16, addr);
}

/* The original tuple of one entry of the buffer (CTA_TUPLE_ORIG), enough for the kernel to find it. */
static void kv_ct_put_orig_tuple(struct nlmsghdr *nlh, const unsigned char *e)
{
	int af = kv_ct_af(e[KV_CT_FAMILY]);
	uint8_t proto = e[KV_CT_PROTOCOL];
	uint16_t sport, dport;
	memcpy(&sport, e + KV_CT_ORIG_SPORT, 2);
	memcpy(&dport, e + KV_CT_ORIG_DPORT, 2);
	struct nlattr *tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	struct nlattr *ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	kv_ct_put_address(nlh, af, CTA_IP_V4_SRC, CTA_IP_V6_SRC, e + KV_CT_ORIG_SRC);
	kv_ct_put_address(nlh, af, CTA_IP_V4_DST, CTA_IP_V6_DST, e + KV_CT_ORIG_DST);
	mnl_attr_nest_end(nlh, ip);
	struct nlattr *p = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		/* the entry keeps the ICMP id where ports go, and type << 8 | code as the "destination" */
		int v6 = proto == IPPROTO_ICMPV6;
		mnl_attr_put_u16(nlh, v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID, htons(sport));
		mnl_attr_put_u8(nlh, v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE, (uint8_t)(dport >> 8));
		mnl_attr_put_u8(nlh, v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE, (uint8_t)dport);
	} else if (e[KV_CT_HAS_PORTS]) {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	}
	mnl_attr_nest_end(nlh, p);
	uint16_t zone;
	memcpy(&zone, e + KV_CT_ZONE, 2);
	if (zone != 0)
		mnl_attr_put_u16(nlh, CTA_TUPLE_ZONE, htons(zone));
	mnl_attr_nest_end(nlh, tuple);
	if (zone != 0)
		mnl_attr_put_u16(nlh, CTA_ZONE, htons(zone));
}

static void kv_ct_copy_address(unsigned char *to, const struct nf_conntrack *ct, int af, int attr4, int attr6)
{
	memset(to, 0, 16);
	const void *a = nfct_get_attr(ct, af == AF_INET ? attr4 : attr6);
	if (a != NULL)
		memcpy(to, a, af == AF_INET ? 4 : 16);
}

static void kv_ct_put_u16(unsigned char *e, int at, uint16_t v)
{
	memcpy(e + at, &v, 2);
}

static void kv_ct_put_u32(unsigned char *e, int at, uint32_t v)
{
	memcpy(e + at, &v, 4);
}

/* Fills one entry (native byte order; addresses in network order) from a parsed conntrack. */
static void kv_ct_fill(unsigned char *e, const struct nf_conntrack *ct)
{
	memset(e, 0, KV_CT_ENTRY_SIZE);
	int af = nfct_get_attr_u8(ct, ATTR_L3PROTO);
	uint8_t proto = nfct_get_attr_u8(ct, ATTR_L4PROTO);
	e[KV_CT_FAMILY] = af == AF_INET ? 4 : 6;
	e[KV_CT_PROTOCOL] = proto;
	e[KV_CT_TCP_STATE] = nfct_attr_is_set(ct, ATTR_TCP_STATE) > 0 ? nfct_get_attr_u8(ct, ATTR_TCP_STATE) : 0xff;
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		kv_ct_put_u16(e, KV_CT_ORIG_SPORT, ntohs(nfct_get_attr_u16(ct, ATTR_ICMP_ID)));
		kv_ct_put_u16(e, KV_CT_ORIG_DPORT,
			      (uint16_t)(nfct_get_attr_u8(ct, ATTR_ICMP_TYPE) << 8 |
					 nfct_get_attr_u8(ct, ATTR_ICMP_CODE)));
	} else if (nfct_attr_is_set(ct, ATTR_ORIG_PORT_SRC) > 0) {
		e[KV_CT_HAS_PORTS] = 1;
		kv_ct_put_u16(e, KV_CT_ORIG_SPORT, ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC)));
		kv_ct_put_u16(e, KV_CT_ORIG_DPORT, ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST)));
		kv_ct_put_u16(e, KV_CT_REPLY_SPORT, ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC)));
		kv_ct_put_u16(e, KV_CT_REPLY_DPORT, ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_DST)));
	}
	kv_ct_put_u16(e, KV_CT_ZONE, nfct_attr_is_set(ct, ATTR_ZONE) > 0 ? nfct_get_attr_u16(ct, ATTR_ZONE) : 0);
	kv_ct_put_u32(e, KV_CT_MARK, nfct_get_attr_u32(ct, ATTR_MARK));
	kv_ct_put_u32(e, KV_CT_ID, nfct_get_attr_u32(ct, ATTR_ID));
	kv_ct_put_u32(e, KV_CT_STATUS, nfct_get_attr_u32(ct, ATTR_STATUS));
	kv_ct_copy_address(e + KV_CT_ORIG_SRC, ct, af, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC);
	kv_ct_copy_address(e + KV_CT_ORIG_DST, ct, af, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST);
	kv_ct_copy_address(e + KV_CT_REPLY_SRC, ct, af, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC);
}

/* The address match the kernel cannot do for IPv6 (KV_CT_MATCH_ANY: everything matches). */
static int kv_ct_matches6(const struct nf_conntrack *ct, int match, const unsigned char *address)
{
	if (match == KV_CT_MATCH_ANY)
		return 1;
	const void *a = nfct_get_attr(ct, match == KV_CT_MATCH_ORIG_SRC ? ATTR_ORIG_IPV6_SRC : ATTR_REPL_IPV6_SRC);
	return a != NULL && memcmp(a, address, 16) == 0;
}

/* Reads the running dump's answers into up to capacity entries (out NULL: discards them) and
 * returns how many it stored; 0 once the dump is over and all of it was returned, or -errno then:
 * ENOBUFS when the kernel could not queue part of it, EINTR when it says the dump was
 * interrupted; either way Java dumps again. A dump is always read to its end, also after a
 * failure (the kernel refuses a new dump on a socket whose last one still runs). Other receive
 * errors (EAGAIN: no answer within the timeout) leave the socket unusable. */
static int kv_ct_read_dump(struct kv_ct *kct, unsigned char *out, int capacity)
{
	struct mnl_socket *nl = kct->dump_nl;
	unsigned int portid = mnl_socket_get_portid(nl);
	int count = 0;
	while (kct->dumping && count < capacity) {
		if (kct->dump_len <= 0) {
			ssize_t n = kv_nl_recv(nl, kct->dump_buf, KV_CT_DUMP_BUF);
			if (n < 0 && errno == ENOBUFS) {
				/* part of the dump is lost; the rest still comes */
				kct->dump_rc = kct->dump_rc ? kct->dump_rc : -ENOBUFS;
				continue;
			}
			if (n < 0) {
				kct->dump_rc = -errno;
				kct->dumping = 0;
				break;
			}
			kct->dump_off = 0;
			kct->dump_len = (int)n;
		}
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(kct->dump_buf + kct->dump_off);
		int len = kct->dump_len;
		for (; count < capacity && mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != kct->dump_seq || nlh->nlmsg_pid != portid)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				kct->dump_intr = 1;
			if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
				if (nlh->nlmsg_type == NLMSG_ERROR) { /* the kernel refused the dump: nothing follows */
					const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
					kct->dump_rc = e->error != 0 ? e->error : -EPROTO;
				}
				kct->dumping = 0;
				len = 0;
				break;
			}
			if ((nlh->nlmsg_type & 0xff) != IPCTNL_MSG_CT_NEW || kct->dump_rc != 0)
				continue;
			struct nf_conntrack *ct = nfct_new();
			if (ct == NULL) {
				kct->dump_rc = -ENOMEM;
				continue;
			}
			if (nfct_nlmsg_parse(nlh, ct) >= 0 && kv_ct_matches6(ct, kct->dump_match6, kct->dump_address)) {
				if (out != NULL)
					kv_ct_fill(out + (size_t)count * KV_CT_ENTRY_SIZE, ct);
				count++;
			}
			nfct_destroy(ct);
		}
		kct->dump_off = mnl_nlmsg_ok(nlh, len) ? (int)((const char *)nlh - kct->dump_buf) : 0;
		kct->dump_len = mnl_nlmsg_ok(nlh, len) ? len : 0;
	}
	if (count > 0 || kct->dumping)
		return count;
	int rc = kct->dump_rc != 0 ? kct->dump_rc : kct->dump_intr ? -EINTR : 0;
	kct->dump_rc = 0;
	kct->dump_intr = 0;
	return rc;
}

/* Starts a dump (after reading any earlier one to its end). match: KV_CT_MATCH_ANY, _ORIG_SRC (the
 * original tuple's source is address) or _REPLY_SRC (the reply tuple's source is address: the
 * destination after DNAT). Its entries come from kv_ct_dump_next. */
static jint kv_ct_dump_start(JNIEnv *env, jclass cls, jlong handle, jint family, jint mark, jint mark_mask, jint match,
			     jbyteArray jaddress)
{
	(void)cls;
	struct kv_ct *kct = KV_PTR(handle);
	int af = kv_ct_af(family);
	if (af < 0 || match < KV_CT_MATCH_ANY || match > KV_CT_MATCH_REPLY_SRC)
		return -EINVAL;
	while (kct->dumping)
		kv_ct_read_dump(kct, NULL, 1 << 30);
	kv_ct_read_dump(kct, NULL, 0); /* forgets its outcome */
	unsigned char *address = kct->dump_address;
	memset(address, 0, 16);
	if (match != KV_CT_MATCH_ANY) {
		if (jaddress == NULL || (*env)->GetArrayLength(env, jaddress) != (af == AF_INET ? 4 : 16))
			return -EINVAL;
		(*env)->GetByteArrayRegion(env, jaddress, 0, af == AF_INET ? 4 : 16, (jbyte *)address);
	}
	struct mnl_socket *nl = kct->dump_nl;
	char req[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = ++kct->seq;
	struct nlmsghdr *nlh = kv_ct_header(req, IPCTNL_MSG_CT_GET, NLM_F_DUMP, af, seq);
	if (mark_mask != 0) {
		mnl_attr_put_u32(nlh, CTA_MARK, htonl((uint32_t)mark));
		mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl((uint32_t)mark_mask));
	}
	/* The kernel's IPv6 address filter is inverted (ctnetlink_filter_match_tuple tests
	 * !ipv6_addr_cmp, true for EQUAL addresses, since CTA_FILTER came in 5.8; still so in 6.18):
	 * it would return every entry but the address's. IPv6 is filtered by family and mark in the
	 * kernel and by address here. */
	kct->dump_match6 = af == AF_INET6 ? match : KV_CT_MATCH_ANY;
	if (match != KV_CT_MATCH_ANY && af == AF_INET) {
		int orig = match == KV_CT_MATCH_ORIG_SRC;
		struct nlattr *tuple = mnl_attr_nest_start(nlh, orig ? CTA_TUPLE_ORIG : CTA_TUPLE_REPLY);
		struct nlattr *ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
		kv_ct_put_address(nlh, af, CTA_IP_V4_SRC, CTA_IP_V6_SRC, address);
		mnl_attr_nest_end(nlh, ip);
		mnl_attr_nest_end(nlh, tuple);
		struct nlattr *filter = mnl_attr_nest_start(nlh, CTA_FILTER);
		mnl_attr_put_u32(nlh, CTA_FILTER_ORIG_FLAGS, orig ? KV_CT_FILTER_IP_SRC : 0);
		mnl_attr_put_u32(nlh, CTA_FILTER_REPLY_FLAGS, orig ? 0 : KV_CT_FILTER_IP_SRC);
		mnl_attr_nest_end(nlh, filter);
	}
	if (kv_nl_send(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	kct->dump_seq = seq;
	kct->dumping = 1;
	return 0;
}

/* The next entries of the dump under way into the buffer, from entry index from up to capacity:
 * see kv_ct_read_dump. */
static jint kv_ct_dump_next(JNIEnv *env, jclass cls, jlong handle, jobject buffer, jint from, jint capacity)
{
	(void)cls;
	unsigned char *out = (*env)->GetDirectBufferAddress(env, buffer);
	jlong room = (*env)->GetDirectBufferCapacity(env, buffer);
	if (out == NULL || from < 0 || capacity <= from || (jlong)capacity * KV_CT_ENTRY_SIZE > room)
		return -EINVAL;
	return kv_ct_read_dump(KV_PTR(handle), out + (size_t)from * KV_CT_ENTRY_SIZE, capacity - from);
}

/* Sends one request and waits for its ack (matched by sequence number). */
static int kv_ct_request(struct kv_ct *ct, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++ct->seq;
	if (kv_nl_send(ct->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	unsigned int portid = mnl_socket_get_portid(ct->nl);
	for (;;) {
		ssize_t n = kv_nl_recv(ct->nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		const struct nlmsghdr *m = (const struct nlmsghdr *)buf;
		int len = (int)n;
		for (; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_type == NLMSG_ERROR && m->nlmsg_seq == ct->seq && m->nlmsg_pid == portid) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);
				return e->error; /* 0: done; otherwise already -errno (ENOENT: gone meanwhile) */
			}
		}
	}
}

static unsigned char *kv_ct_entry(JNIEnv *env, jobject buffer, jint index)
{
	unsigned char *base = (*env)->GetDirectBufferAddress(env, buffer);
	jlong room = (*env)->GetDirectBufferCapacity(env, buffer);
	if (base == NULL || index < 0 || ((jlong)index + 1) * KV_CT_ENTRY_SIZE > room)
		return NULL;
	unsigned char *e = base + (size_t)index * KV_CT_ENTRY_SIZE;
	return kv_ct_af(e[KV_CT_FAMILY]) < 0 ? NULL : e;
}

/* Sets the bits of mask in the entry's mark to those of mark (ctnetlink: new = old & ~mask ^ mark). */
static jint kv_ct_set_mark(JNIEnv *env, jclass cls, jlong handle, jobject buffer, jint index, jint mark, jint mask)
{
	(void)cls;
	unsigned char *e = kv_ct_entry(env, buffer, index);
	if (e == NULL || (mark & ~mask) != 0)
		return -EINVAL;
	char req[MNL_SOCKET_BUFFER_SIZE];
	/* NEW without NLM_F_CREATE: change an existing entry, ENOENT when there is none */
	struct nlmsghdr *nlh = kv_ct_header(req, IPCTNL_MSG_CT_NEW, 0, kv_ct_af(e[KV_CT_FAMILY]), 0);
	kv_ct_put_orig_tuple(nlh, e);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl((uint32_t)mark));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl((uint32_t)mask));
	return kv_ct_request(KV_PTR(handle), nlh);
}

/* Deletes the entry, only if it is still the same one (CTA_ID): ENOENT otherwise. */
static jint kv_ct_delete(JNIEnv *env, jclass cls, jlong handle, jobject buffer, jint index)
{
	(void)cls;
	unsigned char *e = kv_ct_entry(env, buffer, index);
	if (e == NULL)
		return -EINVAL;
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = kv_ct_header(req, IPCTNL_MSG_CT_DELETE, 0, kv_ct_af(e[KV_CT_FAMILY]), 0);
	kv_ct_put_orig_tuple(nlh, e);
	uint32_t id;
	memcpy(&id, e + KV_CT_ID, 4);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(id));
	return kv_ct_request(KV_PTR(handle), nlh);
}

static const JNINativeMethod methods[] = {
	{ "open", "()J", (void *)kv_ct_open },
	{ "close", "(J)I", (void *)kv_ct_close },
	{ "dumpStart", "(JIIII[B)I", (void *)kv_ct_dump_start },
	{ "dumpNext", "(JLjava/nio/ByteBuffer;II)I", (void *)kv_ct_dump_next },
	{ "setMark", "(JLjava/nio/ByteBuffer;III)I", (void *)kv_ct_set_mark },
	{ "delete", "(JLjava/nio/ByteBuffer;I)I", (void *)kv_ct_delete },
};

int kv_register_conntrack(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/ConntrackNative", methods,
				   sizeof(methods) / sizeof(methods[0]));
}
