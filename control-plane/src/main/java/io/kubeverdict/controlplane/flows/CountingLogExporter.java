// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;
import java.util.Collection;

/** The OTLP exporter, with each batch's outcome told to {@link FlowExportCounts} (which frees its places). */
final class CountingLogExporter implements LogRecordExporter {
    private final LogRecordExporter delegate;
    private final FlowExportCounts counts;

    CountingLogExporter(LogRecordExporter delegate, FlowExportCounts counts) {
        this.delegate = delegate;
        this.counts = counts;
    }

    @Override
    public CompletableResultCode export(Collection<LogRecordData> logs) {
        int n = logs.size();
        CompletableResultCode result;
        try {
            result = delegate.export(logs);
        } catch (RuntimeException e) {
            counts.failed(n, e);
            return CompletableResultCode.ofExceptionalFailure(e);
        }
        result.whenComplete(() -> {
            if (result.isSuccess()) {
                counts.sent(n);
            } else {
                counts.failed(n, result.getFailureThrowable());
            }
        });
        return result;
    }

    @Override
    public CompletableResultCode flush() {
        return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
        return delegate.shutdown();
    }
}
