// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tier;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kernel tier: the test makes network namespaces, nftables tables, NFQUEUE bindings or raw sockets
 * (root). It runs only where {@link KernelRequirements} holds. Maven profile {@code -Pkernel}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(Tiers.KERNEL)
@ExtendWith(KernelRequirements.class)
public @interface KernelTest {}
