// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

/**
 * One configuration in one round: sequential, 4-thread and 8-thread samples, and packets queued
 * per connection.
 */
record Measurement(Sample sequential, Sample parallel, Sample parallel8, double queuedPerConnection) {}
