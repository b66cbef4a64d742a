/* SPDX-License-Identifier: Apache-2.0 */
/* libnftables: a context per owner, commands applied as one atomic transaction each,
 * output and errors buffered so Java can read them after a run. */
#include <errno.h>
#include <nftables/libnftables.h>

#include "kv_shim.h"

static jlong kv_nft_open(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (ctx == NULL)
		return -ENOMEM;
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		nft_ctx_free(ctx);
		return -ENOMEM;
	}
	return KV_HANDLE(ctx);
}

static void kv_nft_close(JNIEnv *env, jclass cls, jlong handle)
{
	(void)env;
	(void)cls;
	nft_ctx_free(KV_PTR(handle));
}

static void kv_nft_set_json(JNIEnv *env, jclass cls, jlong handle, jboolean json)
{
	(void)env;
	(void)cls;
	struct nft_ctx *ctx = KV_PTR(handle);
	unsigned int flags = nft_ctx_output_get_flags(ctx);
	flags = json ? (flags | NFT_CTX_OUTPUT_JSON) : (flags & ~NFT_CTX_OUTPUT_JSON);
	nft_ctx_output_set_flags(ctx, flags);
}

/* Runs a whole ruleset text; libnftables applies it as one netlink batch (all or nothing).
 * nft does not report errno, so every failure is -EINVAL with the reason in the error buffer. */
static jint kv_nft_run(JNIEnv *env, jclass cls, jlong handle, jstring commands)
{
	(void)cls;
	const char *text = (*env)->GetStringUTFChars(env, commands, NULL);
	if (text == NULL)
		return -ENOMEM;
	int rc = nft_run_cmd_from_buffer(KV_PTR(handle), text);
	(*env)->ReleaseStringUTFChars(env, commands, text);
	return rc == 0 ? 0 : -EINVAL;
}

static jstring kv_nft_output(JNIEnv *env, jclass cls, jlong handle)
{
	(void)cls;
	const char *out = nft_ctx_get_output_buffer(KV_PTR(handle));
	return (*env)->NewStringUTF(env, out ? out : "");
}

static jstring kv_nft_error(JNIEnv *env, jclass cls, jlong handle)
{
	(void)cls;
	const char *err = nft_ctx_get_error_buffer(KV_PTR(handle));
	return (*env)->NewStringUTF(env, err ? err : "");
}

static const JNINativeMethod methods[] = {
	{ "open", "()J", (void *)kv_nft_open },
	{ "close", "(J)V", (void *)kv_nft_close },
	{ "setJson", "(JZ)V", (void *)kv_nft_set_json },
	{ "run", "(JLjava/lang/String;)I", (void *)kv_nft_run },
	{ "output", "(J)Ljava/lang/String;", (void *)kv_nft_output },
	{ "error", "(J)Ljava/lang/String;", (void *)kv_nft_error },
};

int kv_register_nftables(JNIEnv *env)
{
	return kv_register_natives(env, "io/kubeverdict/jni/NftNative", methods, sizeof(methods) / sizeof(methods[0]));
}
