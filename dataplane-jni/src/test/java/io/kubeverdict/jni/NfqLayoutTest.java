// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.jni.NfqLayout.Constant;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The comparison behind the load-time layout check, without the library. */
class NfqLayoutTest {
    private static final List<Constant> EXPECTED =
            List.of(new Constant("KV_SLOT_SIZE", 144), new Constant("KV_SLOT_HOOK", 6), new Constant("NF_ACCEPT", 1));

    @Test
    void agreeingValuesPass() {
        assertThat(NfqLayout.differences(EXPECTED, new int[] {144, 6, 1})).isEmpty();
        assertThatCode(() -> NfqLayout.check(EXPECTED, new int[] {144, 6, 1})).doesNotThrowAnyException();
    }

    @Test
    void aDifferentValueIsNamedWithBothSides() {
        assertThat(NfqLayout.differences(EXPECTED, new int[] {144, 7, 1}))
                .containsExactly("KV_SLOT_HOOK: shim 7, Java 6");
        assertThatThrownBy(() -> NfqLayout.check(EXPECTED, new int[] {152, 7, 1}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("KV_SLOT_SIZE: shim 152, Java 144")
                .hasMessageContaining("KV_SLOT_HOOK: shim 7, Java 6");
    }

    @Test
    void aConstantOnlyOneSideHasIsReported() {
        assertThat(NfqLayout.differences(EXPECTED, new int[] {144, 6, 1, 9}))
                .containsExactly("shim exports 4 constants, Java knows 3");
        assertThat(NfqLayout.differences(EXPECTED, new int[] {144, 6}))
                .containsExactly("shim exports 2 constants, Java knows 3");
    }

    /** Java's list must name kv_layout.h's constants in its export order, or the check compares the wrong pairs. */
    @Test
    void javaListsTheHeadersConstantsInExportOrder() throws IOException {
        String header = Files.readString(repositoryRoot().resolve("native/src/kv_layout.h"));
        Matcher macro = Pattern.compile("#define KV_LAYOUT\\(X\\)((?:[^\\n]*\\\\\\n)*[^\\n]*)")
                .matcher(header);
        assertThat(macro.find()).as("KV_LAYOUT in kv_layout.h").isTrue();
        List<String> exported = new ArrayList<>();
        Matcher entry = Pattern.compile("X\\((\\w+)\\)").matcher(macro.group(1));
        while (entry.find()) {
            exported.add(entry.group(1));
        }
        assertThat(NfqLayout.JAVA.stream().map(Constant::name).toList()).isEqualTo(exported);
    }

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("native/src/kv_layout.h"))) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "native/src/kv_layout.h not found above " + Path.of("").toAbsolutePath());
    }
}
