// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

/** A failure the sandbox explains in its message (no stack trace needed). */
public final class SandboxException extends RuntimeException {
    public SandboxException(String message) {
        super(message);
    }
}
