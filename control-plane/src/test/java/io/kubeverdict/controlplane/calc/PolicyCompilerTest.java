// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.kubeverdict.proto.v1.Rule;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyCompilerTest {
    /** Found by ManifestLoaderFuzzTest: the rule kept a named port whose set it had dropped. */
    @Test
    void aRuleWithNoUsablePeerButANamedPortMatchesNothingAndRefersToNoSet() {
        NetworkPolicy np = new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("p")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .endPodSelector()
                .addNewIngress()
                .addNewFrom()
                .withNewPodSelector()
                .addNewMatchExpression()
                .withKey("app")
                .withOperator("Near")
                .endMatchExpression()
                .endPodSelector()
                .endFrom()
                .addNewPort()
                .withNewPort("http")
                .endPort()
                .endIngress()
                .endSpec()
                .build();

        CompiledPolicy compiled = PolicyCompiler.compile(np);

        Rule rule = compiled.proto().getPolicy().getInboundRules(0);
        assertThat(rule.getAllPeers()).isFalse();
        assertThat(rule.getPeersList()).isEmpty();
        assertThat(rule.getPortsList()).isEmpty();
        assertThat(compiled.ipSets()).isEmpty();
        assertThat(compiled.problems())
                .extracting(Object::toString)
                .anyMatch(p -> p.contains("spec.ingress[0].from") && p.contains("matches nothing"));
    }

    @Test
    void aNullRuleMatchesNothingAndIsReported() {
        NetworkPolicy np = new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("p")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .endPodSelector()
                .withPolicyTypes("Ingress", "Egress")
                .endSpec()
                .build();
        np.getSpec().setIngress(Arrays.asList((NetworkPolicyIngressRule) null));
        np.getSpec().setEgress(Arrays.asList((NetworkPolicyEgressRule) null));

        CompiledPolicy compiled = PolicyCompiler.compile(np);

        for (Rule rule : List.of(
                compiled.proto().getPolicy().getInboundRules(0),
                compiled.proto().getPolicy().getOutboundRules(0))) {
            assertThat(rule.getAllPeers()).isFalse();
            assertThat(rule.getPeersList()).isEmpty();
        }
        assertThat(compiled.problems())
                .extracting(Object::toString)
                .anyMatch(p -> p.contains("spec.ingress[0]") && p.contains("null"))
                .anyMatch(p -> p.contains("spec.egress[0]") && p.contains("null"));
    }
}
