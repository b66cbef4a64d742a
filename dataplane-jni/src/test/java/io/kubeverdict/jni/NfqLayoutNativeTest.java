// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.jni.NfqLayout.Constant;
import org.junit.jupiter.api.Test;

/** The built shim's exported layout against Java's constants (needs the library, not the kernel). */
class NfqLayoutNativeTest {
    @Test
    void theLoadedShimAgreesWithJava() {
        assertThat(NativeLibrary.unavailabilityCause()).isNull();
        assertThat(NfqLayout.exported())
                .containsExactly(
                        NfqLayout.JAVA.stream().mapToInt(Constant::value).toArray());
    }

    @Test
    void theShimFillsOnlyWhatFitsAndReportsItsCount() {
        NativeLibrary.ensureAvailable();
        int[] two = {-1, -1};
        assertThat(NfqNative.layout(two)).isEqualTo(NfqLayout.JAVA.size());
        assertThat(two)
                .containsExactly(
                        NfqLayout.JAVA.get(0).value(), NfqLayout.JAVA.get(1).value());
        assertThat(NfqNative.layout(new int[0])).isEqualTo(NfqLayout.JAVA.size());
    }
}
