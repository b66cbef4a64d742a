// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.mockapi;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives each test a fresh fabric8 mock API server in CRUD mode (expectations still answer first)
 * and a client of it, injected into the test's fields of type {@code KubernetesMockServer} and
 * {@code KubernetesClient}. Unlike fabric8's own {@code @EnableKubernetesMockClient}, the client
 * is closed before the server, and a closing watch never blocks the server's event loop (see
 * {@link OffLoopWatchCloseDispatcher}), so a test's end cannot hang or fail the suite.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(MockKubernetesExtension.class)
public @interface MockKubernetes {}
