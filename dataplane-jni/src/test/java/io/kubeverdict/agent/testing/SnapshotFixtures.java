package io.kubeverdict.agent.testing;

import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;

/** Complete node snapshots for tests, built from the same messages the sync tests script. */
public final class SnapshotFixtures {
    private SnapshotFixtures() {}

    /**
     * Node "node-1": x/a (10.0.0.1, fd00::1) isolated for ingress by x/allow-from-b, which allows
     * only x/b (10.0.0.2); x/b and x/c (10.0.0.3) are not selected by anything.
     */
    public static NodeSnapshot allowFromB() throws Exception {
        SnapshotAssembler b = new SnapshotAssembler("node-1");
        for (ToAgent m : new ToAgent[] {
                Messages.ipSet(1, "set-b", "10.0.0.2"),
                Messages.allowIngressFrom(2, "x/allow-from-b", "set-b"),
                Messages.endpoint(3, "x", "a", "10.0.0.1", "x/allow-from-b"),
                Messages.endpoint(4, "x", "b", "10.0.0.2"),
                Messages.endpoint(5, "x", "c", "10.0.0.3")}) {
            b.apply(m);
        }
        NodeSnapshot s = b.snapshot();
        // x/a is dual-stack
        return s.toBuilder().setNode("node-1").setEndpoints(0, s.getEndpoints(0).toBuilder()
                .setEndpoint(s.getEndpoints(0).getEndpoint().toBuilder().addIps("fd00::1"))).build();
    }
}
