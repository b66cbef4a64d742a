package io.kubeverdict.runtime.metrics;

import io.kubeverdict.runtime.BuildVersion;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.core.metrics.Info;

/**
 * A process's Prometheus registry with what every kube-verdict process exports: JVM and process
 * meters and {@code kubeverdict_build_info{version,component} 1}.
 */
public final class ProcessMetrics implements AutoCloseable {
    public static final String BUILD_INFO = "kubeverdict_build_info";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    /** @param component which process, e.g. {@code control-plane} or {@code agent} */
    public ProcessMetrics(String component) {
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        // An info metric of the Prometheus client itself: micrometer strips the reserved _info
        // suffix from gauge names.
        Info.builder().name(BUILD_INFO).help("The running build: version and which process, value 1")
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
