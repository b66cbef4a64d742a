/*
 * The reference point of the connection-rate benchmark: the smallest useful NFQUEUE consumer.
 * Binds one queue (copy the first 128 bytes, GSO allowed, like the agent), and answers every
 * packet NF_ACCEPT with one verdict message each. Prints "bound" once the bind is acked, then
 * runs until SIGTERM/SIGINT.  Usage: nfq_accept QUEUE_NUMBER
 * Build: gcc -O2 -o nfq_accept nfq_accept.c -lnetfilter_queue -lmnl
 */
#include <arpa/inet.h>
#include <errno.h>
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

static struct mnl_socket *nl;
static unsigned int queue_num;
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int send_and_ack(struct nlmsghdr *nlh, char *buf, size_t len) {
	unsigned int portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) return -1;
	/* packets cannot arrive before the bind's ack: nothing is queued for us yet */
	ssize_t n = mnl_socket_recvfrom(nl, buf, len);
	if (n < 0) return -1;
	return mnl_cb_run(buf, n, nlh->nlmsg_seq, portid, NULL, NULL) < 0 ? -1 : 0;
}

static int on_packet(const struct nlmsghdr *nlh, void *data) {
	(void)data;
	struct nlattr *attr[NFQA_MAX + 1] = {0};
	if (nfq_nlmsg_parse(nlh, attr) < 0 || attr[NFQA_PACKET_HDR] == NULL) return MNL_CB_ERROR;
	struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *v = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, queue_num);
	nfq_nlmsg_verdict_put(v, ntohl(ph->packet_id), NF_ACCEPT);
	return mnl_socket_sendto(nl, v, v->nlmsg_len) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s QUEUE_NUMBER\n", argv[0]);
		return 2;
	}
	queue_num = (unsigned int)strtoul(argv[1], NULL, 10);
	size_t size = 0xffff + (MNL_SOCKET_BUFFER_SIZE / 2);
	char *buf = malloc(size);
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (buf == NULL || nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nfq_accept: netlink socket");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	unsigned int seq = (unsigned int)time(NULL);
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue_num);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (send_and_ack(nlh, buf, size) < 0) {
		perror("nfq_accept: bind");
		return 1;
	}
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue_num);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 128);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(NFQA_CFG_F_GSO));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
	if (send_and_ack(nlh, buf, size) < 0) {
		perror("nfq_accept: params");
		return 1;
	}
	printf("bound\n");
	fflush(stdout);

	unsigned int portid = mnl_socket_get_portid(nl);
	while (!stop) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, size);
		if (n < 0) {
			if (errno == EINTR) continue;
			if (errno == ENOBUFS) continue; /* the kernel counts what it dropped */
			perror("nfq_accept: recv");
			return 1;
		}
		if (mnl_cb_run(buf, n, 0, portid, on_packet, NULL) < 0) {
			perror("nfq_accept: verdict");
			return 1;
		}
	}
	return 0;
}
