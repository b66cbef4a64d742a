// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * End-to-end tier: real control-plane and agent processes enforcing real packets between pod
 * namespaces (the sandbox, the fault suite). Needs what kernel tests need. Maven profile {@code -Pe2e}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(Tiers.E2E)
@ExtendWith(KernelRequirements.class)
public @interface EndToEndTest {}
