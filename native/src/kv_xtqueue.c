/* SPDX-License-Identifier: Apache-2.0 */
/* The xtables NFQUEUE target through nft_compat, for kernels without the nft `queue` expression.
 * nft's text language cannot express an xtables target, so this file builds the one rule with
 * libnftnl: in ONE netlink transaction it empties a chain of our own table (removing whatever
 * placeholder rule the ruleset text put there) and appends `target NFQUEUE rev 3` to it. All other
 * rules, sets and chains stay in nft text applied through libnftables (kv_nftables.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <libnftnl/common.h>
#include <libnftnl/batch.h>
#include <libnftnl/rule.h>
#include <libnftnl/expr.h>

#include "kv_netlink.h"
#include "kv_shim.h"

/* Appends one rule message (delete-all-in-chain or add-NFQUEUE) to the batch. */
static int kv_xtq_put_rule(struct mnl_nlmsg_batch *batch, int type, uint16_t flags, uint32_t seq, int family,
			   const char *table, const char *chain, const struct xt_NFQ_info_v3 *info)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	if (r == NULL)
		return -ENOMEM;
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, (uint32_t)family);
	/* the setters copy the strings: they fail only when that allocation does */
	if (nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table) < 0 || nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain) < 0) {
		nftnl_rule_free(r);
		return -ENOMEM;
	}
	if (info != NULL) {
		struct nftnl_expr *e = nftnl_expr_alloc("target");
		if (e == NULL) {
			nftnl_rule_free(r);
			return -ENOMEM;
		}
		/* libnftnl keeps (and later frees) the info pointer instead of copying it */
		struct xt_NFQ_info_v3 *owned = malloc(sizeof(*owned));
		if (owned == NULL) {
			nftnl_expr_free(e);
			nftnl_rule_free(r);
			return -ENOMEM;
		}
		*owned = *info;
		nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
		if (nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE") < 0) {
			free(owned);
			nftnl_expr_free(e);
			nftnl_rule_free(r);
			return -ENOMEM;
		}
		if (nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, owned, sizeof(*owned)) < 0) {
			free(owned); /* refused: the expression did not take it */
			nftnl_expr_free(e);
			nftnl_rule_free(r);
			return -EINVAL;
		}
		nftnl_rule_add_expr(r, e); /* the rule owns e (and owned) from here */
	}
	struct nlmsghdr *nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(batch), (uint16_t)type,
							  (uint16_t)family, flags | NLM_F_ACK, seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	mnl_nlmsg_batch_next(batch);
	return 0;
}

/* Reads acks until every message of the batch is answered; the first error wins. */
static int kv_xtq_read_acks(struct mnl_socket *nl, uint32_t first_seq, uint32_t last_seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl);
	int err = 0;
	uint32_t acked = 0, expected = last_seq - first_seq + 1;
	while (acked < expected) {
		ssize_t n = kv_nl_recv(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		int len = (int)n;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_pid != portid || nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
			acked++;
			if (e->error != 0 && err == 0)
				err = e->error; /* already -errno */
			if (e->error != 0)
				return err; /* the kernel aborts the batch at the first error */
		}
	}
	return err;
}

/* family: NFPROTO_IPV4 / NFPROTO_IPV6 / NFPROTO_INET. Queues queue_num .. queue_num+queues-1
 * (--queue-balance; with more than one, --queue-cpu-fanout: the queue of the CPU that handles the
 * packet). Returns 0 or -errno (ENOENT: no such table/chain or no NFQUEUE target;
 * EOPNOTSUPP/EINVAL: nft_compat refuses this family). */
static jint kv_xtq_install(JNIEnv *env, jclass cls, jint family, jstring jtable, jstring jchain, jint queue_num,
			   jint queues, jint bypass)
{
	(void)cls;
	if (queue_num < 0 || queues < 1 || queue_num + queues - 1 > 65535)
		return -EINVAL;
	const char *table = (*env)->GetStringUTFChars(env, jtable, NULL);
	const char *chain = table ? (*env)->GetStringUTFChars(env, jchain, NULL) : NULL;
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	struct mnl_socket *nl = NULL;
	int rc = 0;
	if (table == NULL || chain == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}

	struct xt_NFQ_info_v3 info = {
		.queuenum = (uint16_t)queue_num,
		.queues_total = (uint16_t)queues,
		.flags = (uint8_t)((bypass ? NFQ_FLAG_BYPASS : 0) | (queues > 1 ? NFQ_FLAG_CPU_FANOUT : 0)),
	};
	uint32_t seq = (uint32_t)time(NULL);
	struct mnl_nlmsg_batch *batch = mnl_nlmsg_batch_start(buf, MNL_SOCKET_BUFFER_SIZE);
	nftnl_batch_begin(mnl_nlmsg_batch_current(batch), seq++);
	mnl_nlmsg_batch_next(batch);
	uint32_t first = seq;
	/* DELRULE naming only table and chain removes every rule of the chain. */
	rc = kv_xtq_put_rule(batch, NFT_MSG_DELRULE, 0, seq++, family, table, chain, NULL);
	if (rc == 0)
		rc = kv_xtq_put_rule(batch, NFT_MSG_NEWRULE, NLM_F_APPEND | NLM_F_CREATE, seq++, family, table, chain,
				     &info);
	uint32_t last = seq - 1;
	nftnl_batch_end(mnl_nlmsg_batch_current(batch), seq++);
	mnl_nlmsg_batch_next(batch);
	if (rc == 0) {
		if (kv_nl_send(nl, mnl_nlmsg_batch_head(batch), mnl_nlmsg_batch_size(batch)) < 0)
			rc = -errno;
		else
			rc = kv_xtq_read_acks(nl, first, last);
	}
	mnl_nlmsg_batch_stop(batch);
out:
	if (nl)
		mnl_socket_close(nl);
	free(buf);
	if (chain)
		(*env)->ReleaseStringUTFChars(env, jchain, chain);
	if (table)
		(*env)->ReleaseStringUTFChars(env, jtable, table);
	return rc;
}

static const JNINativeMethod methods[] = {
	{ "install", "(ILjava/lang/String;Ljava/lang/String;III)I", (void *)kv_xtq_install },
};

int kv_register_xtqueue(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/XtQueueNative", methods,
				   sizeof(methods) / sizeof(methods[0]));
}
