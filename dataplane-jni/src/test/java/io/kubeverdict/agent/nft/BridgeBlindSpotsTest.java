// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security audit M10: same-node pod traffic that a Linux bridge forwards reaches the inet forward
 * hook only through br_netfilter with bridge-nf-call-iptables (ip6tables) on, globally or on the
 * bridge. The detector reads a fake /sys/class/net and /proc/sys/net/bridge.
 */
class BridgeBlindSpotsTest {
    @TempDir
    Path root;

    private Path sys() {
        return root.resolve("sys/class/net");
    }

    private Path proc() {
        return root.resolve("proc/sys/net/bridge");
    }

    private void bridge(String name, String... ports) throws IOException {
        Files.createDirectories(sys().resolve(name).resolve("bridge"));
        Files.createDirectories(sys().resolve(name).resolve("brif"));
        for (String port : ports) {
            Files.createDirectories(sys().resolve(name).resolve("brif").resolve(port));
        }
        Files.createDirectories(sys().resolve("eth0")); // not a bridge
    }

    private void brNetfilter(String ip4, String ip6) throws IOException {
        Files.createDirectories(proc());
        Files.writeString(proc().resolve("bridge-nf-call-iptables"), ip4 + "\n");
        Files.writeString(proc().resolve("bridge-nf-call-ip6tables"), ip6 + "\n");
    }

    private BridgeBlindSpots detect() {
        return BridgeBlindSpots.detect(sys(), proc());
    }

    @Test
    void noBridgeNoBlindSpot() throws IOException {
        Files.createDirectories(sys().resolve("eth0"));
        assertThat(detect().none()).isTrue();
        assertThat(detect().describe()).isEqualTo("none");
    }

    @Test
    void aBridgeWithPortsWithoutBrNetfilterIsBlindForBothFamilies() throws IOException {
        bridge("cni0", "veth1", "veth2");
        BridgeBlindSpots found = detect();
        assertThat(found.ipv4()).containsExactly("cni0");
        assertThat(found.ipv6()).containsExactly("cni0");
        assertThat(found.describe()).contains("cni0", "br_netfilter is not loaded");
    }

    @Test
    void brNetfilterWithCallIptablesOffIsBlindForThatFamily() throws IOException {
        bridge("cni0", "veth1");
        brNetfilter("1", "0");
        assertThat(detect().ipv4()).isEmpty();
        assertThat(detect().ipv6()).containsExactly("cni0");
        brNetfilter("0", "1");
        assertThat(detect().ipv4()).containsExactly("cni0");
        assertThat(detect().ipv6()).isEmpty();
    }

    @Test
    void theBridgesOwnNfCallOptionCounts() throws IOException {
        bridge("cni0", "veth1");
        brNetfilter("0", "0");
        Files.writeString(sys().resolve("cni0/bridge/nf_call_iptables"), "1\n");
        Files.writeString(sys().resolve("cni0/bridge/nf_call_ip6tables"), "0\n");
        assertThat(detect().ipv4()).isEmpty();
        assertThat(detect().ipv6()).containsExactly("cni0");
    }

    @Test
    void aBridgeWithoutPortsForwardsNothing() throws IOException {
        bridge("docker0");
        assertThat(detect().none()).isTrue();
    }

    @Test
    void anUnreadableTreeIsReportedNotThrown() {
        BridgeBlindSpots found = BridgeBlindSpots.detect(root.resolve("missing"), proc());
        assertThat(found.none()).isTrue();
    }
}
