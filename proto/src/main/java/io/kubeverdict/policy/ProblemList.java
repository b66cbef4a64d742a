// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.List;

/** What one compile phase skipped: a count and the first messages, in the order found. */
final class ProblemList {

    static final int MAX_MESSAGES = 100;

    private final List<String> messages = new ArrayList<>();
    private int count;

    void add(String message) {
        count++;
        if (messages.size() < MAX_MESSAGES) {
            messages.add(message);
        }
    }

    int count() {
        return count;
    }

    /** The phases' problems in order, as one compile of everything would have found them. */
    static ProblemList concat(ProblemList... phases) {
        ProblemList all = new ProblemList();
        for (ProblemList p : phases) {
            all.count += p.count;
            for (String m : p.messages) {
                if (all.messages.size() < MAX_MESSAGES) {
                    all.messages.add(m);
                }
            }
        }
        return all;
    }

    List<String> messages() {
        return List.copyOf(messages);
    }
}
