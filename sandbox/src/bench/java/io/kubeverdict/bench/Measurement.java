package io.kubeverdict.bench;

/** One configuration in one round: sequential and parallel samples, and packets queued per connection. */
record Measurement(Sample sequential, Sample parallel, double queuedPerConnection) {
}
