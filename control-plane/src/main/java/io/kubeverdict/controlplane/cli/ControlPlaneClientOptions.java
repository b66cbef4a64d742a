// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.runtime.cli.ClientTlsOptions;
import io.kubeverdict.runtime.cli.DurationText;
import io.kubeverdict.runtime.cli.HostPort;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.runtime.grpc.TokenFileCredentials;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Where a live command finds the control plane: {@code --control-plane HOST:PORT} and the same
 * TLS options as the agent (a client certificate signed by the CA the control plane trusts).
 */
final class ControlPlaneClientOptions {
    static final String ENV = "KUBE_VERDICT_CONTROL_PLANE";
    static final String DEFAULT = "localhost:9443";

    /** Where {@value #ENV} is read: the process's environment; tests give their own. */
    static Function<String, String> environment = System::getenv;

    @Option(
            names = "--control-plane",
            paramLabel = "HOST:PORT",
            converter = HostPort.Target.class,
            description = "The control plane's gRPC address (e.g. after kubectl -n kube-verdict port-forward "
                    + "svc/kube-verdict-control-plane 9443). Default: $" + ENV + ", else " + DEFAULT + ".")
    HostPort controlPlane;

    @Mixin
    ClientTlsOptions tls = new ClientTlsOptions();

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            description =
                    "A token for audience kube-verdict (kubectl create token NAME --audience kube-verdict) sent as "
                            + "the caller's identity; the control plane lets it inspect when the API server allows it "
                            + "get /kube-verdict/inspect (ClusterRole kube-verdict-inspector). Without it: kubectl port-forward.")
    Path tokenFile;

    @Option(
            names = "--timeout",
            paramLabel = "DURATION",
            converter = DurationText.class,
            defaultValue = "30s",
            description = "Deadline of each call; for wait, how long to wait in all (5s, 1m30s, or ISO-8601 PT1M). "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration timeout;

    /** Whether --control-plane was given (with --manifests too: a usage error for explain and matrix). */
    boolean given() {
        return controlPlane != null;
    }

    /** Whether a control plane was named, by --control-plane or ${@value #ENV} (explain and matrix: live). */
    boolean named() {
        return given() || fromEnvironment() != null;
    }

    private static String fromEnvironment() {
        String env = environment.apply(ENV);
        return env == null || env.isBlank() ? null : env.strip();
    }

    HostPort target() {
        if (controlPlane != null) {
            return controlPlane;
        }
        String env = fromEnvironment();
        return HostPort.parseTarget(env == null ? DEFAULT : env);
    }

    /** A channel to the target; throws IllegalArgumentException for unusable TLS options. */
    ManagedChannel open() throws IOException {
        return ClientChannels.open(
                target().toString(),
                tls.tls().orElse(null),
                tokenFile == null ? null : new TokenFileCredentials(tokenFile));
    }

    /**
     * A channel to the target, or null after saying on err why there is none (unusable TLS
     * options or files): the live commands then exit {@link ExitCodes#USAGE}.
     */
    ManagedChannel openOrReport(PrintWriter err) {
        try {
            return open();
        } catch (IllegalArgumentException | IOException e) {
            err.println(e.getMessage());
            err.flush();
            return null;
        }
    }

    long deadlineMillis() {
        return timeout.toMillis();
    }

    static void close(ManagedChannel channel) {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reports a failed call and says how to exit: 2 for what the user asked wrong, else 3. */
    int failed(PrintWriter err, StatusRuntimeException e) {
        Status s = e.getStatus();
        err.println("control plane " + target() + ": " + s.getCode()
                + (s.getDescription() == null ? "" : ": " + s.getDescription()));
        err.flush();
        return switch (s.getCode()) {
            case INVALID_ARGUMENT, NOT_FOUND -> ExitCodes.USAGE;
            default -> ExitCodes.UNAVAILABLE;
        };
    }
}
