// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

/** How log events are written to stderr. */
public enum LogFormat {
    /** One line: {@code 2026-12-01T10:00:00.123+01:00 INFO  [thread] logger - message}. */
    text,
    /** One JSON object per line (logback's JsonEncoder, plus an ISO-8601 {@code time}). */
    json
}
