// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shim the agent ships is built hardened (native/pom.xml): relocations resolved at load and
 * then read-only (full RELRO), stack canaries, and nothing exported but the JNI entry points, so
 * no symbol of ours can interpose on (or be interposed by) another library in the JVM.
 */
class ShimHardeningTest {
    @TempDir
    Path dir;

    private ShippedShim shim;

    @BeforeEach
    void extract() throws IOException {
        assumeTrue(ShippedShim.readelfAvailable(), "readelf (binutils) is not installed: cannot inspect the built .so");
        shim = ShippedShim.extractTo(dir);
    }

    @Test
    void relocationsAreBoundAtLoadAndThenReadOnly() throws IOException {
        String dynamic = shim.readelf("-d");
        assertThat(dynamic).as("-Wl,-z,now: BIND_NOW in FLAGS").containsPattern("\\(FLAGS\\)\\s+.*\\bBIND_NOW\\b");
        assertThat(dynamic).as("-Wl,-z,now: NOW in FLAGS_1").containsPattern("\\(FLAGS_1\\)\\s+Flags:.*\\bNOW\\b");
        assertThat(shim.readelf("-l")).as("-Wl,-z,relro: a GNU_RELRO segment").contains("GNU_RELRO");
    }

    @Test
    void exportsOnlyTheJniEntryPoints() throws IOException {
        assertThat(shim.exportedSymbols())
                .as("-fvisibility=hidden: natives are registered by JNI_OnLoad, nothing else is exported")
                .contains("JNI_OnLoad")
                .allMatch(name -> name.matches("JNI_On(Load|Unload)|Java_\\w+"));
    }

    @Test
    void functionsWithBuffersCarryStackCanaries() throws IOException {
        assertThat(shim.importedSymbols()).as("-fstack-protector-strong").contains("__stack_chk_fail");
    }
}
