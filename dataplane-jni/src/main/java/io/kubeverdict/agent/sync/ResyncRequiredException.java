// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

/**
 * The stream can no longer be applied on top of the current state (a sequence gap, a delta for
 * an unknown IP set, a message with no payload); the caller must drop the stream and resync.
 */
public class ResyncRequiredException extends Exception {

    public ResyncRequiredException(String message) {
        super(message);
    }
}
