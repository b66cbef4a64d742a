// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StateEnforcerTest {
    private final StateHolder holder = new StateHolder(0);
    private final List<SelectedAddresses> programmed = new ArrayList<>();
    private final List<EnforcedState> seenByKernelStep = new ArrayList<>();
    private boolean kernelFails;

    private final StateEnforcer enforcer = new StateEnforcer(
            holder,
            selected -> {
                seenByKernelStep.add(holder.current());
                if (kernelFails) {
                    throw new IllegalStateException("nft failed");
                }
                programmed.add(selected);
            },
            Clock.systemUTC());

    private static PacketTuple tcp(String src, String dst, int port) {
        return new PacketTuple().set(IpAddress.parse(src), IpAddress.parse(dst), Protocol.TCP_VALUE, port);
    }

    @Test
    void beforeAnyStateTheDefaultDecides() {
        assertThat(Decision.allowed(new StateHolder(0).decide(tcp("10.0.0.9", "10.0.0.1", 80))))
                .isFalse();
        assertThat(Decision.allowed(new StateHolder(1).decide(tcp("10.0.0.9", "10.0.0.1", 80))))
                .isTrue();
    }

    @Test
    void swapsTheIndexBeforeProgrammingTheKernel() throws Exception {
        NodeSnapshot snapshot = SnapshotFixtures.allowFromB();
        enforcer.enforce(snapshot, 7);

        assertThat(seenByKernelStep).hasSize(1);
        assertThat(seenByKernelStep.get(0).sequence())
                .as("index already swapped when sets change")
                .isEqualTo(7);
        assertThat(programmed)
                .containsExactly(new SelectedAddresses(java.util.Set.of("10.0.0.1"), java.util.Set.of("fd00::1")));
        assertThat(Decision.allowed(holder.decide(tcp("10.0.0.2", "10.0.0.1", 80))))
                .isTrue();
        assertThat(Decision.allowed(holder.decide(tcp("10.0.0.3", "10.0.0.1", 80))))
                .isFalse();
        assertThat(holder.current().snapshot()).isEqualTo(snapshot);
    }

    @Test
    void leavesTheKernelAloneWhenTheSelectionDidNotChange() throws Exception {
        enforcer.enforce(SnapshotFixtures.allowFromB(), 1);
        enforcer.enforce(SnapshotFixtures.allowFromB().toBuilder().clearIpSets().build(), 2);
        assertThat(programmed).hasSize(1);
        assertThat(holder.current().sequence()).isEqualTo(2);
        assertThat(Decision.allowed(holder.decide(tcp("10.0.0.2", "10.0.0.1", 80))))
                .as("set gone: b no longer allowed")
                .isFalse();
    }

    @Test
    void aFailedKernelUpdateIsRetriedWithTheNextGeneration() throws Exception {
        kernelFails = true;
        assertThatThrownBy(() -> enforcer.enforce(SnapshotFixtures.allowFromB(), 1))
                .hasMessageContaining("nft failed");
        kernelFails = false;
        enforcer.enforce(SnapshotFixtures.allowFromB(), 2);
        assertThat(programmed).hasSize(1);
    }

    @Test
    void withTheVerdictCacheEveryGenerationEmptiesTheCacheBeforeItsIndexDecides() throws Exception {
        List<String> steps = new ArrayList<>();
        List<Integer> marks = new ArrayList<>();
        StateHolder cached = new StateHolder(0);
        CacheGenerations generations = new CacheGenerations(
                true,
                timeout -> {
                    steps.add("await with generation " + cached.current().sequence());
                    return true;
                },
                100);
        StateEnforcer withCache = new StateEnforcer(
                cached,
                new SelectedSetsProgrammer() {
                    @Override
                    public void program(SelectedAddresses selected) {
                        steps.add("sets with generation " + cached.current().sequence());
                    }

                    @Override
                    public void program(SelectedAddresses selected, int cacheMark) {
                        steps.add("table with generation " + cached.current().sequence());
                        marks.add(cacheMark);
                    }

                    @Override
                    public void closeCache() {
                        steps.add("close with generation " + cached.current().sequence());
                    }

                    @Override
                    public void resetCache(int cacheMark) {
                        steps.add("reset with generation " + cached.current().sequence());
                        marks.add(cacheMark);
                    }
                },
                Clock.systemUTC(),
                GenerationListener.NONE,
                snapshot -> PodGuard.NONE,
                generations);
        withCache.enforce(SnapshotFixtures.allowFromB(), 1);
        assertThat(cached.generation().cacheMark()).isEqualTo(marks.get(0)).isNotZero();
        withCache.enforce(
                SnapshotFixtures.allowFromB().toBuilder().clearIpSets().build(), 2);
        withCache.enforce(SnapshotFixtures.allowFromB(), 3);
        assertThat(steps)
                .as("each later generation closes, waits and empties the cache while the one before still decides;"
                        + " unchanged sets are not written")
                .containsExactly(
                        "table with generation 1",
                        "close with generation 1",
                        "await with generation 1",
                        "reset with generation 1",
                        "close with generation 2",
                        "await with generation 2",
                        "reset with generation 2");
        assertThat(marks.get(1)).isNotZero().isNotEqualTo(marks.get(0));
        assertThat(marks.get(2)).isNotZero().isNotEqualTo(marks.get(1));
        assertThat(cached.generation().cacheMark()).isEqualTo(marks.get(2));
        assertThat(generations.flushes()).isEqualTo(2);
    }

    @Test
    void aFailedCacheResetLeavesTheStateBeforeInForce() throws Exception {
        StateHolder cached = new StateHolder(0);
        CacheGenerations generations = new CacheGenerations(true, timeout -> true, 100);
        boolean[] fail = {false};
        StateEnforcer withCache = new StateEnforcer(
                cached,
                new SelectedSetsProgrammer() {
                    @Override
                    public void program(SelectedAddresses selected) {}

                    @Override
                    public void resetCache(int cacheMark) {
                        if (fail[0]) {
                            throw new IllegalStateException("nft failed");
                        }
                    }
                },
                Clock.systemUTC(),
                GenerationListener.NONE,
                snapshot -> PodGuard.NONE,
                generations);
        withCache.enforce(SnapshotFixtures.allowFromB(), 1);
        fail[0] = true;
        assertThatThrownBy(() -> withCache.enforce(SnapshotFixtures.allowFromB(), 2))
                .hasMessageContaining("nft failed");
        assertThat(cached.current().sequence())
                .as("the new state never decided: the kernel's cache may hold the old one's keys")
                .isEqualTo(1);
        assertThat(generations.unarmed()).isEqualTo(1);
    }
}
