/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reference point of the connection-rate benchmark: the smallest useful NFQUEUE consumer.
 * Binds COUNT queues from QUEUE_NUMBER on (default 1; copy the first 128 bytes, GSO allowed, like
 * the agent), one socket and one thread each, and answers every packet NF_ACCEPT with one verdict
 * message each. Prints "bound" once every bind is acked, then runs until SIGTERM/SIGINT.
 * Usage: nfq_accept QUEUE_NUMBER [COUNT]
 * Build: gcc -O2 -pthread -o nfq_accept nfq_accept.c -lnetfilter_queue -lmnl
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

struct queue {
	struct mnl_socket *nl;
	unsigned int num;
	char *buf;
	size_t size;
};
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int send_and_ack(struct mnl_socket *nl, struct nlmsghdr *nlh, char *buf, size_t len) {
	unsigned int portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) return -1;
	/* packets cannot arrive before the bind's ack: nothing is queued for us yet */
	ssize_t n = mnl_socket_recvfrom(nl, buf, len);
	if (n < 0) return -1;
	return mnl_cb_run(buf, n, nlh->nlmsg_seq, portid, NULL, NULL) < 0 ? -1 : 0;
}

static int on_packet(const struct nlmsghdr *nlh, void *data) {
	struct queue *q = data;
	struct nlattr *attr[NFQA_MAX + 1] = {0};
	if (nfq_nlmsg_parse(nlh, attr) < 0 || attr[NFQA_PACKET_HDR] == NULL) return MNL_CB_ERROR;
	struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *v = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, q->num);
	nfq_nlmsg_verdict_put(v, ntohl(ph->packet_id), NF_ACCEPT);
	return mnl_socket_sendto(q->nl, v, v->nlmsg_len) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Opens a socket and binds queue q->num; 0 or -1 (errno set). */
static int bind_queue(struct queue *q) {
	q->size = 0xffff + (MNL_SOCKET_BUFFER_SIZE / 2);
	q->buf = malloc(q->size);
	q->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (q->buf == NULL || q->nl == NULL || mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -1;
	unsigned int seq = (unsigned int)time(NULL);
	struct nlmsghdr *nlh = nfq_nlmsg_put(q->buf, NFQNL_MSG_CONFIG, q->num);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (send_and_ack(q->nl, nlh, q->buf, q->size) < 0)
		return -1;
	nlh = nfq_nlmsg_put(q->buf, NFQNL_MSG_CONFIG, q->num);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 128);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(NFQA_CFG_F_GSO));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	return send_and_ack(q->nl, nlh, q->buf, q->size);
}

/* One queue's loop: a blocking recv, then one verdict message per packet. */
static void *serve(void *arg) {
	struct queue *q = arg;
	unsigned int portid = mnl_socket_get_portid(q->nl);
	while (!stop) {
		ssize_t n = mnl_socket_recvfrom(q->nl, q->buf, q->size);
		if (n < 0) {
			if (errno == EINTR) continue;
			if (errno == ENOBUFS) continue; /* the kernel counts what it dropped */
			perror("nfq_accept: recv");
			exit(1);
		}
		if (mnl_cb_run(q->buf, n, 0, portid, on_packet, q) < 0) {
			perror("nfq_accept: verdict");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s QUEUE_NUMBER [COUNT]\n", argv[0]);
		return 2;
	}
	unsigned int first = (unsigned int)strtoul(argv[1], NULL, 10);
	int count = argc == 3 ? atoi(argv[2]) : 1;
	if (count < 1 || count > 64) {
		fprintf(stderr, "nfq_accept: COUNT must be 1..64\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	struct queue *queues = calloc((size_t)count, sizeof(*queues));
	if (queues == NULL)
		return 1;
	for (int i = 0; i < count; i++) {
		queues[i].num = first + (unsigned int)i;
		if (bind_queue(&queues[i]) < 0) {
			perror("nfq_accept: bind");
			return 1;
		}
	}
	printf("bound\n");
	fflush(stdout);

	/* The other threads block SIGTERM/SIGINT, so the signal interrupts the main thread's recv and
	 * its return ends the process. */
	sigset_t stopping, old;
	sigemptyset(&stopping);
	sigaddset(&stopping, SIGTERM);
	sigaddset(&stopping, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopping, &old);
	for (int i = 1; i < count; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, serve, &queues[i]) != 0) {
			perror("nfq_accept: thread");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	serve(&queues[0]);
	return 0;
}
