/* SPDX-License-Identifier: Apache-2.0 */
/* Network namespaces: move the calling thread into the namespace of a path
 * (/run/netns/NAME or /proc/PID/ns/net). Only that thread moves; sockets opened afterwards
 * by it (netlink for nftables, nfnetlink_queue) live in the new namespace. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "kv_shim.h"

static jint kv_netns_enter(JNIEnv *env, jclass cls, jstring path)
{
	(void)cls;
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (p == NULL)
		return -ENOMEM;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	(*env)->ReleaseStringUTFChars(env, path, p);
	if (fd < 0)
		return -errno;
	int rc = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static const JNINativeMethod methods[] = {
	{ "enter", "(Ljava/lang/String;)I", (void *)kv_netns_enter },
};

int kv_register_netns(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/NetnsNative", methods,
				   sizeof(methods) / sizeof(methods[0]));
}
