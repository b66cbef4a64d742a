// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.policy.IpAddress;
import picocli.CommandLine.Option;

/**
 * {@code -n NAMESPACE} as kubectl reads it: the namespace of pods named without one, so
 * {@code policies -n x a} is {@code policies x/a}. A name with a slash, or an address, is as given.
 */
final class NamespaceOption {
    @Option(
            names = {"-n", "--namespace"},
            paramLabel = "NAMESPACE",
            description = "The namespace of pods named without one (NAME for NAMESPACE/NAME).")
    String namespace;

    /** The pod as namespace/name: with -n for a bare name; anything else as given. */
    String qualify(String pod) {
        if (namespace == null
                || namespace.isEmpty()
                || pod.contains("/")
                || IpAddress.canonical(pod).isPresent()) {
            return pod;
        }
        return namespace + "/" + pod;
    }
}
