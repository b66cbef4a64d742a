// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSetType;
import java.util.List;

/** A live set of node addresses defined by a {@link NodeSetDef}. */
final class NodeSetState extends MemberSet {
    final NodeSetDef def;

    NodeSetState(NodeSetDef def) {
        super(def.id());
        this.def = def;
    }

    @Override
    IpSetType type() {
        return IpSetType.IP;
    }

    /** The addresses a node gives this set. */
    List<String> contribution(NodeModel node) {
        return node != null && def.nodes().matches(node.labels()) ? node.addresses() : List.of();
    }
}
