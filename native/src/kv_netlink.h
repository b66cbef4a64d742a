/* SPDX-License-Identifier: Apache-2.0 */
/* Netlink send and receive that retry when a signal interrupts them (EINTR), so a signal
 * delivered to the JVM's thread never turns into a failed transaction or a lost ack. */
#ifndef KV_NETLINK_H
#define KV_NETLINK_H

#include <errno.h>
#include <sys/types.h>
#include <libmnl/libmnl.h>

static inline ssize_t kv_nl_send(const struct mnl_socket *nl, const void *buf, size_t len)
{
	ssize_t n;
	do
		n = mnl_socket_sendto(nl, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

static inline ssize_t kv_nl_recv(const struct mnl_socket *nl, void *buf, size_t len)
{
	ssize_t n;
	do
		n = mnl_socket_recvfrom(nl, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

#endif
