// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.Verdict;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The CLI's one vocabulary of verdicts: "allowed" and "denied", in tables, explanations and
 * filters. Input is read in any case and with the spellings the rest of the system uses too (allow
 * and deny of the policy metrics, accept and drop of the packet metrics, the API's VERDICT_ALLOW
 * and VERDICT_DENY); docs/operations.md lists them side by side.
 */
final class VerdictWords {
    static final String ALLOWED = "allowed";
    static final String DENIED = "denied";

    private VerdictWords() {}

    static String of(Verdict v) {
        return v == Verdict.VERDICT_ALLOW ? ALLOWED : DENIED;
    }

    /** allowed, denied or all (VERDICT_UNSPECIFIED), any spelling above; null for anything else. */
    static Verdict parse(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "allowed", "allow", "accept", "accepted", "verdict_allow" -> Verdict.VERDICT_ALLOW;
            case "denied", "deny", "drop", "dropped", "verdict_deny" -> Verdict.VERDICT_DENY;
            case "all", "any" -> Verdict.VERDICT_UNSPECIFIED;
            default -> null;
        };
    }

    /** --verdict: allowed, denied or all. */
    static final class Filter implements ITypeConverter<Verdict> {
        @Override
        public Verdict convert(String text) {
            Verdict v = parse(text);
            if (v == null) {
                throw new TypeConversionException("'" + text + "' is no verdict: allowed, denied or all");
            }
            return v;
        }
    }
}
