package io.kubeverdict.testbed;

import java.util.Locale;

/** Transport protocols a pod can serve and the prober can try. */
public enum Protocol {
    TCP, UDP, SCTP;

    /** Parses "TCP", "udp", ... as Kubernetes writes them (case-insensitive). */
    public static Protocol parse(String text) {
        return valueOf(text.trim().toUpperCase(Locale.ROOT));
    }
}
