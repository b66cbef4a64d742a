// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.flow;

import java.util.concurrent.Callable;

/**
 * Runs work on a thread inside one network namespace: the sockets it opens belong to that
 * namespace for their whole life, whichever thread uses them afterwards. The agent's kernel tests
 * enter a namespace by path, the sandbox's tests through its testbed.
 */
public interface InNamespace {
    <T> T call(Callable<T> work) throws Exception;
}
