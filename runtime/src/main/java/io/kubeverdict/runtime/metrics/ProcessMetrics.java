// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.metrics;

import io.kubeverdict.runtime.BuildVersion;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.core.metrics.Info;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * A process's Prometheus registry with what every kube-verdict process exports: JVM and process
 * meters and {@code kubeverdict_build_info{version,component} 1}. Histograms only have the buckets
 * their meters name ({@link Histograms#ONLY_EXPLICIT_BUCKETS}), and two of micrometer's JVM meters
 * are renamed so that {@code promtool check metrics} accepts the scrape: {@code process.cpu.time}
 * (nanoseconds) becomes {@code process_cpu_seconds_total}, the conventional name, and
 * {@code system.cpu.count} (a gauge, so no {@code _count}) becomes {@code system_cpus}.
 */
public final class ProcessMetrics implements AutoCloseable {
    public static final String BUILD_INFO = "kubeverdict_build_info";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    /** @param component which process, e.g. {@code control-plane} or {@code agent} */
    public ProcessMetrics(String component) {
        registry.config()
                .meterFilter(Histograms.ONLY_EXPLICIT_BUCKETS)
                .meterFilter(MeterFilter.deny(id -> id.getName().equals("process.cpu.time")))
                .meterFilter(new MeterFilter() {
                    @Override
                    public Meter.Id map(Meter.Id id) {
                        return id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
                    }
                });
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            FunctionCounter.builder("process.cpu", sun, b -> b.getProcessCpuTime() / 1e9)
                    .baseUnit("seconds")
                    .description("CPU time used by the process")
                    .register(registry);
        }
        // An info metric of the Prometheus client itself: micrometer strips the reserved _info
        // suffix from gauge names.
        Info.builder()
                .name(BUILD_INFO)
                .help("The running build: version and which process, value 1")
                .labelNames("version", "component")
                .register(registry.getPrometheusRegistry())
                .addLabelValues(BuildVersion.current(), component);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
