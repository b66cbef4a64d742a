// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.io.PrintWriter;
import java.util.Collection;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * A usage error in a few lines, as kubectl prints one: what was wrong, "did you mean" for a
 * misspelt command or option, and where the full usage is; never the whole usage.
 */
final class UsageErrors implements IParameterExceptionHandler {
    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine command = ex.getCommandLine();
        PrintWriter err = command.getErr();
        err.println("error: " + ex.getMessage());
        if (ex instanceof UnmatchedArgumentException u) {
            List<String> suggestions = suggestions(u);
            if (!suggestions.isEmpty()) {
                err.println("Did you mean " + String.join(" or ", suggestions) + "?");
            }
        }
        err.println("Run '" + command.getCommandSpec().qualifiedName() + " --help' for usage.");
        err.flush();
        return command.getCommandSpec().exitCodeOnInvalidInput();
    }

    /**
     * picocli's suggestions (by similarity; it misses some near misses, such as swapped letters
     * in "wiat" or a dropped one in "--nmespace"), else the commands or options one or two edits
     * away from the first word it could not place.
     */
    static List<String> suggestions(UnmatchedArgumentException u) {
        if (!u.getSuggestions().isEmpty()) {
            return u.getSuggestions();
        }
        List<String> unmatched = u.getUnmatched();
        if (unmatched.isEmpty()) {
            return List.of();
        }
        String typed = unmatched.get(0);
        Collection<String> candidates;
        if (typed.startsWith("-")) {
            typed = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
            candidates = u.getCommandLine().getCommandSpec().optionsMap().keySet();
        } else {
            candidates = u.getCommandLine().getSubcommands().keySet();
        }
        String word = typed;
        return candidates.stream()
                .filter(name -> name.length() > 2)
                .filter(name -> editDistance(word, name) <= Math.min(2, name.length() / 2))
                .toList();
    }

    /** Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
    static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            for (int j = 0; j <= b.length(); j++) {
                if (i == 0 || j == 0) {
                    d[i][j] = i + j;
                    continue;
                }
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
