/* SPDX-License-Identifier: Apache-2.0 */
/* Library entry: registers every concern's native table (no Java_ symbol names). */
#include "kv_shim.h"

int kv_register_natives(JNIEnv *env, const char *class_name, const JNINativeMethod *methods, int count)
{
	jclass cls = (*env)->FindClass(env, class_name);
	if (cls == NULL)
		return -1;
	int rc = (*env)->RegisterNatives(env, cls, methods, count);
	(*env)->DeleteLocalRef(env, cls);
	return rc == JNI_OK ? 0 : -1;
}

JNIEXPORT jint JNI_OnLoad(JavaVM *vm, void *reserved)
{
	(void)reserved;
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	if (kv_register_nftables(env) || kv_register_nfqueue(env) || kv_register_netns(env) ||
	    kv_register_xtqueue(env) || kv_register_conntrack(env))
		return JNI_ERR; /* FindClass/RegisterNatives left a pending Java exception */
	return JNI_VERSION_1_8;
}
