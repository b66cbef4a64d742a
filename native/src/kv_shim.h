/* SPDX-License-Identifier: Apache-2.0 */
/* Shared declarations of the kube-verdict JNI shim. Each concern lives in its own file and
 * registers its natives from JNI_OnLoad (kv_jni.c). Functions return >= 0 on success and
 * -errno on failure; Java turns negative results into typed exceptions. */
#ifndef KV_SHIM_H
#define KV_SHIM_H

#include <jni.h>
#include <stdint.h>

#define KV_PTR(handle) ((void *)(intptr_t)(handle))
#define KV_HANDLE(ptr) ((jlong)(intptr_t)(ptr))

int kv_register_natives(JNIEnv *env, const char *class_name, const JNINativeMethod *methods, int count);

int kv_register_nftables(JNIEnv *env);
int kv_register_nfqueue(JNIEnv *env);
int kv_register_netns(JNIEnv *env);
int kv_register_xtqueue(JNIEnv *env);
int kv_register_conntrack(JNIEnv *env);

#endif
