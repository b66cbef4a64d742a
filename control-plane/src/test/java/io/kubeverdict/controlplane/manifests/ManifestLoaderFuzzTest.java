// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testing.tier.Tiers;
import java.nio.charset.StandardCharsets;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;

/**
 * Bytes -> manifests -> snapshots -> verdicts, for any bytes: a load either succeeds or fails
 * with a {@link ManifestLoadException} that names the file; what loads always calculates,
 * compiles and decides. Any other exception or error (a parser's StackOverflowError, a
 * calculation's NullPointerException) is a finding.
 */
@Tag(Tiers.FUZZ)
class ManifestLoaderFuzzTest {
    /** One loader for every run, as the directory source keeps one: building its mappers costs more than a load. */
    private static final ManifestLoader LOADER = new ManifestLoader();

    private static final String SEED = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x, labels: {ns: x}}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: a, namespace: x, labels: {pod: a}}
            spec: {nodeName: n1, containers: [{name: c, image: i, ports: [{name: serve-80-tcp, containerPort: 80}]}]}
            status: {phase: Running, podIP: 10.0.0.1}
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: p, namespace: x}
            spec:
              podSelector: {matchLabels: {pod: a}}
              ingress:
              - from: [{namespaceSelector: {matchExpressions: [{key: ns, operator: In, values: [x]}]}}]
                ports: [{port: serve-80-tcp}, {port: 81, endPort: 90, protocol: UDP}]
            """;

    @FuzzTest(maxDuration = "30s")
    void anyManifestBytes(FuzzedDataProvider data) {
        int mode = data.consumeInt(0, 2);
        String file = data.consumeBoolean() ? "fuzz.json" : "fuzz.yaml";
        byte[] bytes;
        if (mode == 0) {
            bytes = data.consumeRemainingAsBytes();
        } else {
            // The seed with fuzz bytes spliced in: reaches past the parser into binding and calculation.
            byte[] seed = SEED.getBytes(StandardCharsets.UTF_8);
            int at = data.consumeInt(0, seed.length);
            int cut = data.consumeInt(0, Math.min(64, seed.length - at));
            byte[] splice = mode == 1
                    ? data.consumeRemainingAsBytes()
                    : data.consumeRemainingAsAsciiString().getBytes(StandardCharsets.UTF_8);
            bytes = new byte[seed.length - cut + splice.length];
            System.arraycopy(seed, 0, bytes, 0, at);
            System.arraycopy(splice, 0, bytes, at, splice.length);
            System.arraycopy(seed, at + cut, bytes, at + splice.length, seed.length - at - cut);
        }
        SortedMap<String, byte[]> files = new TreeMap<>();
        files.put(file, bytes);

        LoadedManifests loaded;
        try {
            loaded = LOADER.load(files);
        } catch (ManifestLoadException e) {
            assertThat(e.getMessage()).contains(file);
            return;
        }
        WhatIfDefaults.apply(loaded.pods(), null, WhatIfDefaults.DEFAULT_NODE);
        OfflineCluster cluster = new OfflineCluster(loaded.namespaces(), loaded.pods(), loaded.policies());
        if (loaded.pods().size() <= 20) {
            ConnectivityMatrix matrix = ConnectivityMatrix.of(cluster, Protocol.TCP, 80);
            assertThat(matrix.pods()).hasSizeLessThanOrEqualTo(loaded.pods().size());
        }
    }
}
