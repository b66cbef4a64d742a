// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The renewal schedule on a made-up clock: serving renewals, the two-step CA rotation, bad Secrets. */
class RenewalPlanTest {
    private static final List<String> NAMES = List.of("cp.kv.svc", "cp");
    private static final RenewalPlan.Lifetimes LIFETIMES = new RenewalPlan.Lifetimes(
            Duration.ofDays(100), Duration.ofDays(20), Duration.ofDays(1), Duration.ofDays(9));
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private final RenewalPlan plan = new RenewalPlan(NAMES, LIFETIMES);

    private static boolean signedBy(KeyedCertificate leaf, X509Certificate ca) {
        try {
            leaf.certificate().verify(ca.getPublicKey());
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void nothingStoredMakesACaAndAServingCertificateThatSurviveTheSecret() throws Exception {
        TlsMaterial m = plan.plan(null, T0);
        assertThat(m.next()).isNull();
        assertThat(signedBy(m.serving(), m.ca().certificate())).isTrue();
        assertThat(m.serving().certificate().getSubjectAlternativeNames().stream()
                        .map(san -> (Object) san.get(1)))
                .containsExactly(NAMES.toArray());
        assertThat(m.ca().certificate().getBasicConstraints()).isGreaterThanOrEqualTo(0);
        TlsMaterial read = TlsMaterial.fromData(m.toData());
        assertThat(read.toData()).isEqualTo(m.toData());
        assertThat(plan.plan(read, T0.plus(Duration.ofDays(1)))).isSameAs(read);
    }

    @Test
    void theServingCertificateIsRenewedWithAThirdOfItsLifetimeLeftOrWhenItsNamesChange() {
        TlsMaterial m = plan.plan(null, T0);
        assertThat(plan.plan(m, T0.plus(Duration.ofDays(5)))).isSameAs(m);
        TlsMaterial renewed = plan.plan(m, T0.plus(Duration.ofDays(6)));
        assertThat(renewed.ca()).isSameAs(m.ca());
        assertThat(renewed.serving()).isNotSameAs(m.serving());
        assertThat(signedBy(renewed.serving(), m.ca().certificate())).isTrue();

        TlsMaterial renamed = new RenewalPlan(List.of("other.kv.svc"), LIFETIMES).plan(m, T0.plus(Duration.ofDays(1)));
        assertThat(renamed.serving()).isNotSameAs(m.serving());
        assertThat(renamed.ca()).isSameAs(m.ca());
    }

    @Test
    void aCaIsReplacedInTwoStepsSoAgentsTrustTheNextOneBeforeItSignsAnything() {
        TlsMaterial m = plan.plan(null, T0);
        Instant rotation = T0.plus(Duration.ofDays(81));
        TlsMaterial step1 = plan.plan(m, rotation);
        assertThat(step1.next()).isNotNull();
        assertThat(step1.ca()).isSameAs(m.ca());
        assertThat(signedBy(step1.serving(), m.ca().certificate()))
                .as("still signed by the old CA")
                .isTrue();
        assertThat(step1.trusted())
                .containsExactly(m.ca().certificate(), step1.next().certificate());

        assertThat(plan.plan(step1, rotation.plus(Duration.ofHours(23))).next()).isSameAs(step1.next());
        TlsMaterial step2 = plan.plan(step1, rotation.plus(Duration.ofDays(1)));
        assertThat(step2.ca()).isSameAs(step1.next());
        assertThat(step2.next()).isNull();
        assertThat(signedBy(step2.serving(), step2.ca().certificate())).isTrue();
        assertThat(step2.trusted())
                .as("the old CA stays trusted for replicas still serving its certificate")
                .containsExactly(step2.ca().certificate(), m.ca().certificate());

        TlsMaterial afterOldExpired = plan.plan(step2, T0.plus(Duration.ofDays(101)));
        assertThat(afterOldExpired.previous()).isNull();
        assertThat(afterOldExpired.ca()).isSameAs(step2.ca());
    }

    @Test
    void anExpiredCaStartsOver() {
        TlsMaterial m = plan.plan(null, T0);
        TlsMaterial later = plan.plan(m, T0.plus(Duration.ofDays(200)));
        assertThat(later.ca().certificate()).isNotEqualTo(m.ca().certificate());
        assertThat(signedBy(later.serving(), later.ca().certificate())).isTrue();
    }

    @Test
    void unusableSecretsSayWhatIsWrong() {
        TlsMaterial m = plan.plan(null, T0);
        TlsMaterial other = plan.plan(null, T0);
        Map<String, String> data = new HashMap<>(m.toData());
        data.put(TlsMaterial.TLS_KEY, other.toData().get(TlsMaterial.TLS_KEY));
        assertThatThrownBy(() -> TlsMaterial.fromData(data))
                .isInstanceOf(IOException.class)
                .hasMessage("tls.key does not belong to tls.crt");
        Map<String, String> foreign = new HashMap<>(m.toData());
        foreign.put(TlsMaterial.TLS_CERT, other.toData().get(TlsMaterial.TLS_CERT));
        foreign.put(TlsMaterial.TLS_KEY, other.toData().get(TlsMaterial.TLS_KEY));
        assertThatThrownBy(() -> TlsMaterial.fromData(foreign)).hasMessage("tls.crt is not signed by ca.crt");
        Map<String, String> garbage = new HashMap<>(m.toData());
        garbage.put(TlsMaterial.CA_CERT, "-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n");
        assertThatThrownBy(() -> TlsMaterial.fromData(garbage)).hasMessageStartingWith("ca.crt: ");
        Map<String, String> missing = new HashMap<>(m.toData());
        missing.remove(TlsMaterial.CA_KEY);
        assertThatThrownBy(() -> TlsMaterial.fromData(missing)).hasMessage("ca.key is missing");
        Map<String, String> leafAsCa = new HashMap<>(m.toData());
        leafAsCa.put(TlsMaterial.CA_CERT, m.toData().get(TlsMaterial.TLS_CERT));
        leafAsCa.put(TlsMaterial.CA_KEY, m.toData().get(TlsMaterial.TLS_KEY));
        assertThatThrownBy(() -> TlsMaterial.fromData(leafAsCa)).hasMessage("ca.crt is not a CA certificate");
    }
}
