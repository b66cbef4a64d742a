// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Mock API server tier: the test runs fabric8 informers or clients against fabric8's mock
 * Kubernetes API server (a real HTTP server on loopback). Maven profile {@code -Pmockapi}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(Tiers.MOCK_API)
public @interface MockApiTest {}
