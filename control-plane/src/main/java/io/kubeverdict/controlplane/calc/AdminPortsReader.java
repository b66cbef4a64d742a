// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.calc.AdminSpecFields.nonEmptyList;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.object;
import static io.kubeverdict.controlplane.calc.AdminSpecFields.setFields;

import io.kubeverdict.controlplane.calc.AdminPolicy.NamedPort;
import io.kubeverdict.controlplane.calc.AdminPolicy.Port;
import io.kubeverdict.controlplane.calc.AdminPolicy.PortRange;
import io.kubeverdict.controlplane.calc.AdminSpecFields.Unusable;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the ports of an admin-tier rule, in the form of its API version: v1alpha1 {@code ports}
 * (AdminNetworkPolicy, BaselineAdminNetworkPolicy) or v1alpha2 {@code protocols}
 * (ClusterNetworkPolicy), both into {@link Port}s; null when the rule leaves them out (every
 * port). A port that cannot be used throws {@link Unusable}: the rule fails closed. Pure.
 */
final class AdminPortsReader {
    private AdminPortsReader() {}

    /** v1alpha1 ports: portNumber {protocol, port} | namedPort | portRange {protocol, start, end}. */
    static List<Port> ports(String field, Object value) throws Unusable {
        if (value == null) {
            return null;
        }
        List<?> list = nonEmptyList(field, value);
        List<Port> out = new ArrayList<>();
        for (int j = 0; j < list.size(); j++) {
            String f = field + "[" + j + "]";
            Map<?, ?> p = object(f, list.get(j));
            List<String> set = setFields(p, Set.of("portNumber", "namedPort", "portRange"));
            if (set.size() != 1) {
                throw new Unusable(
                        f,
                        set.isEmpty()
                                ? "sets none of portNumber, namedPort, portRange"
                                : "sets more than one of " + String.join(", ", set));
            }
            switch (set.get(0)) {
                case "portNumber" -> {
                    Map<?, ?> n = object(f + ".portNumber", p.get("portNumber"));
                    int port = port(f + ".portNumber.port", n.get("port"));
                    out.add(new PortRange(protocol(f + ".portNumber.protocol", n.get("protocol")), port, port));
                }
                case "portRange" -> {
                    Map<?, ?> n = object(f + ".portRange", p.get("portRange"));
                    out.add(range(
                            f + ".portRange",
                            protocol(f + ".portRange.protocol", n.get("protocol")),
                            n.get("start"),
                            n.get("end")));
                }
                default -> out.add(namedPort(f + ".namedPort", p.get("namedPort")));
            }
        }
        return out;
    }

    /** v1alpha2 protocols: tcp|udp|sctp {destinationPort: {number} | {range: {start, end}}} | destinationNamedPort. */
    static List<Port> protocols(String field, Object value) throws Unusable {
        if (value == null) {
            return null;
        }
        List<?> list = nonEmptyList(field, value);
        List<Port> out = new ArrayList<>();
        for (int j = 0; j < list.size(); j++) {
            String f = field + "[" + j + "]";
            Map<?, ?> p = object(f, list.get(j));
            List<String> set = setFields(p, Set.of("tcp", "udp", "sctp", "destinationNamedPort"));
            if (set.size() != 1) {
                throw new Unusable(
                        f,
                        set.isEmpty()
                                ? "sets none of tcp, udp, sctp, destinationNamedPort"
                                : "sets more than one of " + String.join(", ", set));
            }
            String which = set.get(0);
            if (which.equals("destinationNamedPort")) {
                out.add(namedPort(f + ".destinationNamedPort", p.get(which)));
                continue;
            }
            Protocol protocol = switch (which) {
                case "tcp" -> Protocol.TCP;
                case "udp" -> Protocol.UDP;
                default -> Protocol.SCTP;
            };
            Map<?, ?> proto = object(f + "." + which, p.get(which));
            String pf = f + "." + which + ".destinationPort";
            Map<?, ?> dp = object(pf, proto.get("destinationPort"));
            List<String> form = setFields(dp, Set.of("number", "range"));
            if (form.size() != 1) {
                throw new Unusable(pf, form.isEmpty() ? "sets neither number nor range" : "sets both number and range");
            }
            if (form.get(0).equals("number")) {
                int port = port(pf + ".number", dp.get("number"));
                out.add(new PortRange(protocol, port, port));
            } else {
                Map<?, ?> r = object(pf + ".range", dp.get("range"));
                out.add(range(pf + ".range", protocol, r.get("start"), r.get("end")));
            }
        }
        return out;
    }

    static PortRange range(String field, Protocol protocol, Object start, Object end) throws Unusable {
        int lo = port(field + ".start", start);
        int hi = port(field + ".end", end);
        if (lo >= hi) {
            throw new Unusable(field, "start " + lo + " must be less than end " + hi);
        }
        return new PortRange(protocol, lo, hi);
    }

    static NamedPort namedPort(String field, Object value) throws Unusable {
        if (!(value instanceof String s) || !PortNames.valid(s)) {
            throw new Unusable(field, "invalid port name \"" + value + "\"");
        }
        return new NamedPort(s);
    }

    static int port(String field, Object value) throws Unusable {
        if ((value instanceof Integer || value instanceof Long)
                && ((Number) value).longValue() >= 1
                && ((Number) value).longValue() <= 65535) {
            return ((Number) value).intValue();
        }
        throw new Unusable(field, value == null ? "missing" : "port " + value + " is not in 1-65535");
    }

    static Protocol protocol(String field, Object value) throws Unusable {
        Protocol p = value == null || value instanceof String ? Protocols.parse((String) value) : null;
        if (p == null) {
            throw new Unusable(field, "unsupported protocol \"" + value + "\" (TCP, UDP or SCTP)");
        }
        return p;
    }
}
