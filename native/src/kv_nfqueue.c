/* NFQUEUE over libmnl with libnetfilter_queue's message helpers: open a netlink socket,
 * bind one queue (header-only copy, GSO, optional fail-open). Packet batches and verdicts
 * are added next to these in this file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "kv_shim.h"

struct kv_queue {
	struct mnl_socket *nl;
	unsigned int portid;
	uint16_t queue_num;
};

/* Sends one config message and waits for the kernel's ack. */
static int kv_nfq_send_config(struct kv_queue *q, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	ssize_t n = mnl_socket_recvfrom(q->nl, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return mnl_cb_run(buf, n, nlh->nlmsg_seq, q->portid, NULL, NULL) < 0 ? -errno : 0;
}

static void kv_nfq_free(struct kv_queue *q)
{
	if (q->nl)
		mnl_socket_close(q->nl);
	free(q);
}

/* Opens a socket and binds queue_num. flags: NFQA_CFG_F_* (GSO, FAIL_OPEN). */
static jlong kv_nfq_open(JNIEnv *env, jclass cls, jint queue_num, jint copy_bytes, jint flags)
{
	(void)env;
	(void)cls;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct kv_queue *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	q->queue_num = (uint16_t)queue_num;
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

static const JNINativeMethod methods[] = {
	{ "open", "(III)J", (void *)kv_nfq_open },
	{ "close", "(J)I", (void *)kv_nfq_close },
	{ "fd", "(J)I", (void *)kv_nfq_fd },
};

int kv_register_nfqueue(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/NfqNative", methods,
				   sizeof(methods) / sizeof(methods[0]));
}
