// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import java.util.List;

/**
 * A manifest load that is rejected as a whole: some file or document could not be read. Carries
 * every error found (at most one per file: a file is not read past its first syntax error).
 */
public final class ManifestLoadException extends Exception {
    private final List<ManifestProblem> errors;
    private final int unlisted;

    /** @param unlisted further errors that were counted but not located */
    public ManifestLoadException(List<ManifestProblem> errors, int unlisted) {
        super(summary(errors, unlisted));
        this.errors = List.copyOf(errors);
        this.unlisted = unlisted;
    }

    public ManifestLoadException(ManifestProblem error) {
        this(List.of(error), 0);
    }

    /** The errors, each with its place, in file order. */
    public List<ManifestProblem> errors() {
        return errors;
    }

    /** How many errors there were in all. */
    public int count() {
        return errors.size() + unlisted;
    }

    private static String summary(List<ManifestProblem> errors, int unlisted) {
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("a rejected load names at least one error");
        }
        int more = errors.size() - 1 + unlisted;
        return errors.get(0) + (more == 0 ? "" : " (and " + more + " more)");
    }
}
