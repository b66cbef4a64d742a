// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.io.PrintWriter;
import java.util.Locale;

/** Steps and their timings, for a person watching stderr. */
public final class Progress {
    private final PrintWriter out;
    private final long start = System.nanoTime();
    private long stepStart;
    private String step;

    public Progress(PrintWriter out) {
        this.out = out;
    }

    public static Progress silent() {
        return new Progress(new PrintWriter(java.io.Writer.nullWriter()));
    }

    /** Starts a step (ending the previous one). */
    public void step(String what) {
        done();
        step = what;
        stepStart = System.nanoTime();
        out.printf(Locale.ROOT, "[%6.1fs] %s ...%n", seconds(start), what);
        out.flush();
    }

    /** Ends the current step and prints how long it took. */
    public void done() {
        if (step != null) {
            out.printf(Locale.ROOT, "[%6.1fs]   done: %s (%.1fs)%n", seconds(start), step, seconds(stepStart));
            out.flush();
            step = null;
        }
    }

    public void note(String message) {
        out.printf(Locale.ROOT, "[%6.1fs] %s%n", seconds(start), message);
        out.flush();
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
