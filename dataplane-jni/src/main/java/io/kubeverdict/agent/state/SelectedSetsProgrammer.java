// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

/** Puts the selected local pod addresses into the kernel's queue sets (one transaction). */
@FunctionalInterface
public interface SelectedSetsProgrammer {
    void program(SelectedAddresses selected) throws Exception;
}
