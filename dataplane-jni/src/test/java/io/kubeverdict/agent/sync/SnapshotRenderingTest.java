// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The assembler's rendering of a whole snapshot, which decides whether a kept state may be
 * resumed from: a resume is taken on a digest match, and must then hold exactly what a full
 * resync would.
 */
class SnapshotRenderingTest {
    private static final List<String> ADDRESSES =
            List.of("10.0.0.1", "10.0.0.2", "10.0.0.3", "fd00::1", "::ffff:10.0.0.4", "10.0.0.5");
    private static final List<String> RANGES = List.of("10.244.1.0/24", "fd00:1::/64", "10.244.2.9/24", "FD00:2::/64");

    @Test
    void thePodRangesAreSortedWhateverTheirOrderInTheNodeUpdate() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        a.apply(ToAgent.newBuilder()
                .setSequence(1)
                .setNodeUpdate(
                        NodeUpdate.newBuilder().addPodCidrs("fd00:1::/64").addPodCidrs("10.244.1.0/24"))
                .build());
        assertThat(a.snapshot().getPodCidrsList()).containsExactly("10.244.1.0/24", "fd00:1::/64");
    }

    @Test
    void aRenderedSnapshotIsItsOwnRenderingAndAnyOtherSaysWhatDiffers() {
        NodeSnapshot sent = NodeSnapshot.newBuilder()
                .setNode("n1")
                .addIpSets(ipSet("s1", "10.0.0.2", "10.0.0.1"))
                .addPolicies(allowIngressFrom("x/p", "s1"))
                .addEndpoints(podEndpoint("x", "a", "::ffff:10.0.0.5", "x/p"))
                .addPodCidrs("10.244.1.9/24")
                .build();
        NodeSnapshot rendered = SnapshotAssembler.rendering(sent);
        assertThat(SnapshotAssembler.differenceFromRendering(rendered)).isNull();
        assertThat(SnapshotAssembler.differenceFromRendering(sent))
                .isEqualTo("its IP sets, endpoints, pod ranges differ from how this agent renders them");
        assertThat(rendered.getEndpoints(0).getEndpoint().getIpsList()).containsExactly("10.0.0.5");
        assertThat(rendered.getPodCidrsList()).containsExactly("10.244.1.0/24");
    }

    /**
     * Random snapshots as a control plane sends them (any order, duplicate members, IPv4-mapped
     * addresses, ranges in non-canonical text). Whatever an agent keeps, when the check lets it be
     * offered and the control plane's snapshot (here: in another order) has its digest, the state
     * a full resync gives is exactly the kept one. A state kept unrendered (as an older release
     * might have) is refused where it differs, and the sample does hold digest matches that would
     * have been wrong.
     */
    @Test
    void whatMayBeOfferedAndMatchesIsWhatAFullResyncGives() {
        Random random = new Random(34);
        int resumed = 0;
        int refusedThatWouldHaveBeenWrong = 0;
        for (int i = 0; i < 2000; i++) {
            NodeSnapshot sent = randomSnapshot(random);
            NodeSnapshot reordered = reordered(sent, random);
            for (NodeSnapshot kept : List.of(SnapshotAssembler.rendering(sent), sent)) {
                boolean offered = SnapshotAssembler.differenceFromRendering(kept) == null;
                boolean matches = SnapshotDigest.matches(reordered, SnapshotDigest.of(kept));
                NodeSnapshot fullResync = SnapshotAssembler.rendering(reordered);
                if (offered && matches) {
                    assertThat(fullResync).as("resumed from %s", kept).isEqualTo(kept);
                    resumed++;
                } else if (matches && !fullResync.equals(kept)) {
                    refusedThatWouldHaveBeenWrong++;
                }
            }
        }
        assertThat(resumed).as("resumes taken").isGreaterThan(100);
        assertThat(refusedThatWouldHaveBeenWrong).as("wrong resumes refused").isGreaterThan(100);
    }

    private static NodeSnapshot randomSnapshot(Random random) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode("n1");
        List<String> setIds = new ArrayList<>();
        for (int s = 0, n = random.nextInt(3); s < n; s++) {
            String id = "s" + s;
            setIds.add(id);
            b.addIpSets(ipSet(id, pick(ADDRESSES, random, 4).toArray(String[]::new)));
        }
        for (int p = 0, n = random.nextInt(3); p < n; p++) {
            b.addPolicies(allowIngressFrom("x/p" + p, setIds.toArray(String[]::new)));
        }
        for (int e = 0, n = random.nextInt(3); e < n; e++) {
            String address = ADDRESSES.get(random.nextInt(ADDRESSES.size()));
            b.addEndpoints(podEndpoint("x", "pod" + e, address, "x/p0"));
        }
        // Ranges as a Node lists them: each once (a duplicate would differ by count, not order).
        List<String> ranges = new ArrayList<>(RANGES);
        Collections.shuffle(ranges, random);
        b.addAllPodCidrs(ranges.subList(0, random.nextInt(3)));
        return b.build();
    }

    /** Up to {@code max} items drawn with repetition: duplicates and any order. */
    private static List<String> pick(List<String> from, Random random, int max) {
        List<String> out = new ArrayList<>();
        for (int i = 0, n = random.nextInt(max + 1); i < n; i++) {
            out.add(from.get(random.nextInt(from.size())));
        }
        return out;
    }

    /** The same content in another order: what the digest does not count. */
    private static NodeSnapshot reordered(NodeSnapshot s, Random random) {
        NodeSnapshot.Builder b =
                s.toBuilder().clearIpSets().clearPolicies().clearEndpoints().clearPodCidrs();
        List<io.kubeverdict.proto.v1.IpSet> sets = new ArrayList<>();
        for (io.kubeverdict.proto.v1.IpSet set : s.getIpSetsList()) {
            List<String> members = new ArrayList<>(set.getMembersList());
            Collections.shuffle(members, random);
            sets.add(set.toBuilder().clearMembers().addAllMembers(members).build());
        }
        Collections.shuffle(sets, random);
        List<io.kubeverdict.proto.v1.ActivePolicy> policies = new ArrayList<>(s.getPoliciesList());
        Collections.shuffle(policies, random);
        List<io.kubeverdict.proto.v1.Endpoint> endpoints = new ArrayList<>(s.getEndpointsList());
        Collections.shuffle(endpoints, random);
        List<String> ranges = new ArrayList<>(s.getPodCidrsList());
        Collections.shuffle(ranges, random);
        return b.addAllIpSets(sets)
                .addAllPolicies(policies)
                .addAllEndpoints(endpoints)
                .addAllPodCidrs(ranges)
                .build();
    }
}
