/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: sends one crafted IP packet (header included) given as hex.
 * Java has no raw sockets; the kernel tests compile this with gcc and run it in a namespace.
 * usage: kvt_rawsend 4|6 DESTINATION HEXBYTES */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned char buf[4096];
	if (argc != 4 || strlen(argv[3]) % 2 || strlen(argv[3]) / 2 > sizeof(buf)) {
		fprintf(stderr, "usage: kvt_rawsend 4|6 DESTINATION HEXBYTES\n");
		return 2;
	}
	size_t n = strlen(argv[3]) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(argv[3] + 2 * i, "%2x", &v) != 1)
			return 2;
		buf[i] = (unsigned char)v;
	}
	int v6 = argv[1][0] == '6';
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	ssize_t r;
	if (v6) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
		if (inet_pton(AF_INET6, argv[2], &a.sin6_addr) != 1)
			return 2;
		r = sendto(fd, buf, n, 0, (struct sockaddr *)&a, sizeof(a));
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET };
		if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1)
			return 2;
		r = sendto(fd, buf, n, 0, (struct sockaddr *)&a, sizeof(a));
	}
	if (r < 0) {
		perror("sendto");
		return 1;
	}
	close(fd);
	return 0;
}
