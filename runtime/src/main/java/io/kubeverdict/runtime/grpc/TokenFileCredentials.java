// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * A caller's identity on every call (the agent's, an operator's for the live CLI): {@code authorization: Bearer TOKEN} with the projected
 * ServiceAccount token read from its file at each call, so the kubelet's rotation (it rewrites the
 * file well before expiry) is picked up without a restart. A file that cannot be read fails the
 * call (UNAUTHENTICATED, with the path) rather than calling without identity.
 */
public final class TokenFileCredentials extends CallCredentials {
    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final Path file;

    public TokenFileCredentials(Path file) {
        this.file = file;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
        appExecutor.execute(() -> {
            String token;
            try {
                token = Files.readString(file, StandardCharsets.US_ASCII).strip();
            } catch (IOException | RuntimeException e) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("cannot read the token file " + file + ": " + e));
                return;
            }
            if (token.isEmpty()) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("the token file " + file + " is empty"));
                return;
            }
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + token);
            applier.apply(headers);
        });
    }
}
