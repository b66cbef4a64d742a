package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Tuple;
import java.util.List;

/**
 * A node snapshot compiled for the hot path: endpoints by address, IP-set membership, rules in
 * evaluation order. Immutable and thread-safe; a changed snapshot compiles into a new index.
 * The semantics are those documented in policy.proto.
 *
 * <p>Layout: one open-addressing table per family maps an address to its local endpoint (if
 * any) and to the sorted list of IP sets it belongs to, so a packet costs two lookups whatever
 * the number of sets; named-port membership (address, protocol, port) has its own table, looked
 * up only when a named-port clause is reached. Rules are flattened into parallel arrays.
 */
public final class SnapshotIndex {

    private final String node;
    // address -> (endpoint + 1) << 32 | membership offset
    private final AddressTable v4;
    private final AddressTable v6;
    // (address, protocol << 16 | port) -> membership offset
    private final AddressTable v4Named;
    private final AddressTable v6Named;
    private final int[] mem;

    // [endpoint * 2 + direction] -> range of tiers that list policies for that direction
    private final int[] epTierStart;
    private final int[] epTierEnd;
    private final int[] tierDefault;
    private final int[] tierName;
    private final int[] tierPolStart;
    private final int[] tierPolEnd;
    private final int[] tierPolicies;
    // [policy * 2 + direction] -> range of rules
    private final int[] polRuleStart;
    private final int[] polRuleEnd;

    private final int[] ruleAction;
    private final boolean[] ruleAllPeers;
    private final int[] ruleSetStart;
    private final int[] ruleSetEnd;
    private final int[] ruleSets;
    private final RangeSet[] ruleV4;
    private final RangeSet[] ruleV6;
    private final int[] rulePortStart;
    private final int[] rulePortEnd;
    private final int[] portProto;
    private final int[] portLo;
    private final int[] portHi;
    private final int[] portNamedSet;

    // [endpoint * 2 + direction] -> the bit-mask program, or null: not isolated or > 64 rules (walk).
    private final Program[] programs;
    private final int programCount;

    // For words only.
    private final EndpointId[] endpointIds;
    private final String[] tierNames;
    private final PolicyId[] policyIds;
    private final int[] rulePolicy;
    private final int[] ruleDirection;
    private final String[] ruleIds;
    private final int problemCount;
    private final List<String> problems;

    private SnapshotIndex(String node, SnapshotCompiler c) {
        this.node = node;
        v4 = c.v4Table;
        v6 = c.v6Table;
        v4Named = c.v4NamedTable;
        v6Named = c.v6NamedTable;
        mem = c.memPool;
        epTierStart = c.epTierStart;
        epTierEnd = c.epTierEnd;
        tierDefault = c.tierDefault.toArray();
        tierName = c.tierName.toArray();
        tierPolStart = c.tierPolStart.toArray();
        tierPolEnd = c.tierPolEnd.toArray();
        tierPolicies = c.tierPolicies.toArray();
        polRuleStart = c.polRuleStart.toArray();
        polRuleEnd = c.polRuleEnd.toArray();
        ruleAction = c.ruleAction.toArray();
        ruleAllPeers = new boolean[ruleAction.length];
        for (int r = 0; r < ruleAllPeers.length; r++) {
            ruleAllPeers[r] = c.ruleAllPeers.get(r) != 0;
        }
        ruleSetStart = c.ruleSetStart.toArray();
        ruleSetEnd = c.ruleSetEnd.toArray();
        ruleSets = c.ruleSets.toArray();
        ruleV4 = c.ruleV4.toArray(new RangeSet[0]);
        ruleV6 = c.ruleV6.toArray(new RangeSet[0]);
        rulePortStart = c.rulePortStart.toArray();
        rulePortEnd = c.rulePortEnd.toArray();
        portProto = c.portProto.toArray();
        portLo = c.portLo.toArray();
        portHi = c.portHi.toArray();
        portNamedSet = c.portNamedSet.toArray();
        endpointIds = c.endpointIds.toArray(new EndpointId[0]);
        tierNames = c.tierNameIndex.keySet().toArray(new String[0]);
        policyIds = c.policyIds.toArray(new PolicyId[0]);
        rulePolicy = c.rulePolicy.toArray();
        ruleDirection = c.ruleDirection.toArray();
        ruleIds = c.ruleIds.toArray(new String[0]);
        problemCount = c.problemCount;
        problems = List.copyOf(c.problems);
        programs = new Program[epTierStart.length];
        programCount = buildPrograms();
    }

    /** One program per distinct tier list; endpoints selected by the same policies share it. */
    private int buildPrograms() {
        java.util.Map<java.util.List<Integer>, Program> shared = new java.util.HashMap<>();
        for (int slot = 0; slot < programs.length; slot++) {
            if (epTierStart[slot] == epTierEnd[slot]) {
                continue;
            }
            int direction = slot & 1;
            java.util.List<Integer> key = new java.util.ArrayList<>();
            key.add(direction);
            for (int t = epTierStart[slot]; t < epTierEnd[slot]; t++) {
                key.add(tierName[t]);
                key.add(tierDefault[t]);
                key.add(tierPolEnd[t] - tierPolStart[t]);
                for (int k = tierPolStart[t]; k < tierPolEnd[t]; k++) {
                    key.add(tierPolicies[k]);
                }
            }
            if (!shared.containsKey(key)) {
                shared.put(key, buildProgram(slot, direction));
            }
            programs[slot] = shared.get(key);
        }
        return (int) shared.values().stream().filter(java.util.Objects::nonNull).distinct().count();
    }

    private Program buildProgram(int slot, int direction) {
        Program.Builder b = new Program.Builder();
        for (int t = epTierStart[slot]; t < epTierEnd[slot]; t++) {
            b.tier(tierDefault[t], tierName[t]);
            for (int k = tierPolStart[t]; k < tierPolEnd[t]; k++) {
                int policy = tierPolicies[k];
                if (policy < 0) {
                    continue;
                }
                int pslot = policy * 2 + direction;
                for (int r = polRuleStart[pslot]; r < polRuleEnd[pslot]; r++) {
                    int[][] clauses = new int[rulePortEnd[r] - rulePortStart[r]][];
                    for (int q = rulePortStart[r]; q < rulePortEnd[r]; q++) {
                        clauses[q - rulePortStart[r]] = new int[] {portProto[q], portLo[q], portHi[q], portNamedSet[q]};
                    }
                    int[] sets = java.util.Arrays.copyOfRange(ruleSets, ruleSetStart[r], ruleSetEnd[r]);
                    if (!b.rule(r, ruleAction[r], ruleAllPeers[r], sets, ruleV4[r], ruleV6[r], clauses)) {
                        return null; // too many rules for one mask: this endpoint walks its rules
                    }
                }
            }
        }
        return b.build();
    }

    /** How many (endpoint, direction) pairs are isolated but have too many rules for a program. */
    public int walkingSlots() {
        int n = 0;
        for (int slot = 0; slot < programs.length; slot++) {
            n += programs[slot] == null && epTierStart[slot] != epTierEnd[slot] ? 1 : 0;
        }
        return n;
    }

    /** How many distinct bit-mask programs the endpoints share (for logs and tests). */
    public int programCount() {
        return programCount;
    }

    public static SnapshotIndex compile(NodeSnapshot snapshot) {
        return new SnapshotIndex(snapshot.getNode(), new SnapshotCompiler().compile(snapshot));
    }

    public String node() {
        return node;
    }

    public int endpointCount() {
        return endpointIds.length;
    }

    /** How many unusable items (bad addresses, missing sets/policies, ...) compile skipped. */
    public int problemCount() {
        return problemCount;
    }

    /** The first problems, in words (at most 100). */
    public List<String> problems() {
        return problems;
    }

    // ------------------------------------------------------------------ hot path

    /**
     * The hot path: decides a packet without allocating. Returns a {@link Decision} code: whether
     * it is allowed, and an index of what decided, which {@link #describe} turns into words.
     * Egress of a local source is evaluated first (a deny there decides); then ingress of a local
     * destination. For a packet both directions allow, the code names the ingress decision unless
     * the destination is not isolated (or not local) and the source's egress was decided by a rule.
     */
    public int decide(PacketTuple packet) {
        return decide(packet, false);
    }

    /** decide() by the rule-by-rule walk only: the yardstick the bit-mask programs are tested against. */
    int decideByWalking(PacketTuple packet) {
        return decide(packet, true);
    }

    private int decide(PacketTuple packet, boolean walkOnly) {
        long srcEntry;
        long dstEntry;
        long srcHi = packet.srcHi;
        long srcLo = packet.srcLo;
        long dstHi = packet.dstHi;
        long dstLo = packet.dstLo;
        if (packet.family == IpAddress.V4) {
            srcHi = 0;
            srcLo &= 0xFFFF_FFFFL;
            dstHi = 0;
            dstLo &= 0xFFFF_FFFFL;
            srcEntry = v4.get(srcLo, 0);
            dstEntry = v4.get(dstLo, 0);
        } else if (packet.family == IpAddress.V6) {
            srcEntry = v6.get(srcHi, srcLo, 0);
            dstEntry = v6.get(dstHi, dstLo, 0);
        } else {
            return Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true);
        }
        int srcEndpoint = endpointOf(srcEntry);
        int dstEndpoint = endpointOf(dstEntry);
        if (srcEndpoint < 0 && dstEndpoint < 0) {
            return Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true);
        }
        int egress = -1;
        if (srcEndpoint >= 0) {
            egress = evaluate(srcEndpoint, Decision.EGRESS, packet, dstHi, dstLo, membershipOf(dstEntry), walkOnly);
            if (!Decision.allowed(egress)) {
                return egress;
            }
        }
        if (dstEndpoint < 0) {
            return egress;
        }
        int ingress = evaluate(dstEndpoint, Decision.INGRESS, packet, srcHi, srcLo, membershipOf(srcEntry), walkOnly);
        if (!Decision.allowed(ingress)) {
            return ingress;
        }
        if (egress >= 0 && Decision.index(ingress) == Decision.NOT_ISOLATED && !Decision.isFixedReason(egress)) {
            return egress;
        }
        return ingress;
    }

    private static int endpointOf(long entry) {
        return entry < 0 ? -1 : (int) (entry >>> 32) - 1;
    }

    private static int membershipOf(long entry) {
        return entry < 0 ? 0 : (int) entry;
    }

    /** One direction of one local endpoint; remote is the other side's address. */
    private int evaluate(int endpoint, int direction, PacketTuple packet, long remoteHi, long remoteLo, int remoteMem,
                         boolean walkOnly) {
        Program program = programs[endpoint * 2 + direction];
        if (program != null && !walkOnly) {
            return evaluate(program, direction, packet, remoteHi, remoteLo, remoteMem);
        }
        return walk(endpoint, direction, packet, remoteHi, remoteLo, remoteMem);
    }

    /** The bit-mask evaluation (see {@link Program}): rules whose peers and ports match, then tiers. */
    private int evaluate(Program p, int direction, PacketTuple packet, long remoteHi, long remoteLo, int remoteMem) {
        long peers = peerMask(p, packet.family, remoteHi, remoteLo, remoteMem);
        long candidates = peers == 0 ? 0 : peers & portMask(p, packet, peers);
        long[] tierMasks = p.tierMasks;
        for (int t = 0; t < tierMasks.length; t++) {
            long m = candidates & tierMasks[t];
            int action;
            int index;
            if (m != 0) {
                int bit = Long.numberOfTrailingZeros(m);
                action = p.actions[bit];
                index = ruleCodeIndex(p.rules[bit]);
            } else {
                action = p.tierDefaults[t];
                index = Decision.FIRST_INDEXED + p.tierNames[t];
            }
            if (action != SnapshotCompiler.ACTION_PASS) {
                return Decision.of(index, direction, action == SnapshotCompiler.ACTION_ALLOW);
            }
        }
        return Decision.of(Decision.PASSED_ALL_TIERS, direction, true);
    }

    /** Rules whose peers hold the remote address: all-peers rules, IP-set peers, ipBlocks. */
    private long peerMask(Program p, int family, long remoteHi, long remoteLo, int remoteMem) {
        long peers = p.allPeersMask;
        int[] pool = mem;
        for (int i = remoteMem + 1, end = remoteMem + pool[remoteMem]; i <= end; i++) {
            peers |= p.setMask(pool[i]);
        }
        return peers | (family == IpAddress.V4 ? p.v4Blocks : p.v6Blocks).get(remoteHi, remoteLo);
    }

    /** Rules (among those in peers) whose ports match: no ports, a numbered clause, a named port. */
    private long portMask(Program p, PacketTuple packet, long peers) {
        long ports = p.noPortsMask;
        long wanted = peers & ~ports;
        if (wanted == 0) {
            return ports;
        }
        int protocol = packet.protocol;
        MaskMap byPort = protocol == 6 ? p.tcpPorts : protocol == 17 ? p.udpPorts : protocol == 132 ? p.sctpPorts : null;
        if (byPort == null) {
            return ports; // only rules without ports match other protocols
        }
        ports |= byPort.get(0, packet.dstPort);
        wanted &= ~ports;
        long[] namedMasks = p.namedMasks;
        int namedMem = -1;
        for (int q = 0; q < namedMasks.length && wanted != 0; q++) {
            long m = namedMasks[q];
            if ((m & wanted) == 0) {
                continue;
            }
            if (namedMem < 0) {
                namedMem = namedMembership(packet);
            }
            if (isMember(namedMem, p.namedSets[q])) {
                ports |= m;
                wanted &= ~m;
            }
        }
        return ports;
    }

    /** Rule-by-rule evaluation: for endpoints with more than 64 rules, and as the tests' yardstick. */
    int walk(int endpoint, int direction, PacketTuple packet, long remoteHi, long remoteLo, int remoteMem) {
        int slot = endpoint * 2 + direction;
        int tierStart = epTierStart[slot];
        int tierEnd = epTierEnd[slot];
        if (tierStart == tierEnd) {
            return Decision.of(Decision.NOT_ISOLATED, direction, true);
        }
        int protocol = packet.protocol;
        boolean hasPorts = protocol == 6 || protocol == 17 || protocol == 132;
        int namedMem = -1; // looked up on the first named-port clause only
        for (int t = tierStart; t < tierEnd; t++) {
            int decided = -1;
            policies:
            for (int k = tierPolStart[t], kEnd = tierPolEnd[t]; k < kEnd; k++) {
                int policy = tierPolicies[k];
                if (policy < 0) {
                    continue;
                }
                int pslot = policy * 2 + direction;
                for (int r = polRuleStart[pslot], rEnd = polRuleEnd[pslot]; r < rEnd; r++) {
                    if (!peerMatches(r, packet.family, remoteHi, remoteLo, remoteMem)) {
                        continue;
                    }
                    int ps = rulePortStart[r];
                    int pe = rulePortEnd[r];
                    if (ps != pe) {
                        if (!hasPorts) {
                            continue;
                        }
                        boolean portMatched = false;
                        for (int q = ps; q < pe; q++) {
                            int named = portNamedSet[q];
                            if (named == SnapshotCompiler.NOT_NAMED) {
                                if (portProto[q] == protocol && packet.dstPort >= portLo[q] && packet.dstPort <= portHi[q]) {
                                    portMatched = true;
                                    break;
                                }
                            } else if (named >= 0) {
                                if (namedMem < 0) {
                                    namedMem = namedMembership(packet);
                                }
                                if (isMember(namedMem, named)) {
                                    portMatched = true;
                                    break;
                                }
                            }
                        }
                        if (!portMatched) {
                            continue;
                        }
                    }
                    decided = r;
                    break policies;
                }
            }
            int action = decided >= 0 ? ruleAction[decided] : tierDefault[t];
            if (action == SnapshotCompiler.ACTION_PASS) {
                continue;
            }
            int index = decided >= 0 ? ruleCodeIndex(decided) : Decision.FIRST_INDEXED + tierName[t];
            return Decision.of(index, direction, action == SnapshotCompiler.ACTION_ALLOW);
        }
        return Decision.of(Decision.PASSED_ALL_TIERS, direction, true);
    }

    private boolean peerMatches(int r, int family, long hi, long lo, int remoteMem) {
        if (ruleAllPeers[r]) {
            return true;
        }
        int ss = ruleSetStart[r];
        int se = ruleSetEnd[r];
        if (ss != se && mem[remoteMem] != 0) {
            for (int i = ss; i < se; i++) {
                if (isMember(remoteMem, ruleSets[i])) {
                    return true;
                }
            }
        }
        RangeSet ranges = family == IpAddress.V4 ? ruleV4[r] : ruleV6[r];
        return ranges != null && ranges.contains(hi, lo);
    }

    private int namedMembership(PacketTuple packet) {
        int ext = packet.protocol << 16 | packet.dstPort;
        long entry = packet.family == IpAddress.V4
                ? v4Named.get(packet.dstLo & 0xFFFF_FFFFL, ext)
                : v6Named.get(packet.dstHi, packet.dstLo, ext);
        return entry < 0 ? 0 : (int) entry;
    }

    /** Binary search of a set index in the sorted membership list at offset. */
    private boolean isMember(int offset, int set) {
        int low = offset + 1;
        int high = offset + mem[offset];
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int v = mem[mid];
            if (v < set) {
                low = mid + 1;
            } else if (v > set) {
                high = mid - 1;
            } else {
                return true;
            }
        }
        return false;
    }

    private int ruleCodeIndex(int rule) {
        return Decision.FIRST_INDEXED + tierNames.length + rule;
    }

    // ------------------------------------------------------------------ words

    /** The deciding rule of a code, or -1 for fixed reasons and tier defaults. */
    private int ruleOf(int code) {
        int r = Decision.index(code) - Decision.FIRST_INDEXED - tierNames.length;
        return r >= 0 && r < ruleIds.length ? r : -1;
    }

    private String tierOf(int code) {
        int t = Decision.index(code) - Decision.FIRST_INDEXED;
        return t >= 0 && t < tierNames.length ? tierNames[t] : null;
    }

    /** The policy whose rule decided, or null (not isolated, tier default, no endpoint). */
    public PolicyId decidingPolicy(int code) {
        int r = ruleOf(code);
        return r < 0 ? null : policyIds[rulePolicy[r]];
    }

    /** The id of the rule that decided ("ingress[0]"), or "" when no rule decided. */
    public String decidingRuleId(int code) {
        int r = ruleOf(code);
        return r < 0 ? "" : ruleIds[r];
    }

    /** The reason of one direction's code, e.g. "allowed by default/x/allow-a ingress[0]". */
    public String reason(int code) {
        int index = Decision.index(code);
        switch (index) {
            case Decision.NO_ENDPOINT:
                return "no local endpoint";
            case Decision.NOT_ISOLATED:
                return "not isolated";
            case Decision.PASSED_ALL_TIERS:
                return "every tier passed";
            default:
                break;
        }
        String verb = Decision.allowed(code) ? "allowed by " : "denied by ";
        int r = ruleOf(code);
        if (r >= 0) {
            PolicyId p = policyIds[rulePolicy[r]];
            return verb + p.getTier() + "/" + p.getName() + " " + ruleIds[r];
        }
        String tier = tierOf(code);
        if (tier != null) {
            return "no rule matched: " + verb + "the default of tier " + tier;
        }
        return "unknown decision code " + code;
    }

    /** A one-line account of a code for verdict logs: "DENY ingress: no rule matched: ...". */
    public String describe(int code) {
        String verdict = Decision.allowed(code) ? "ALLOW" : "DENY";
        if (Decision.index(code) == Decision.NO_ENDPOINT) {
            return verdict + ": " + reason(code);
        }
        return verdict + " " + Decision.directionName(Decision.direction(code)) + ": " + reason(code);
    }

    // ------------------------------------------------------------------ explain

    /** The full story of a tuple, for explain tools and verdict logs (allocates). */
    public Explanation explain(Tuple tuple) {
        PacketTuple packet = PacketTuple.of(tuple);
        return explain(packet).toBuilder().setTuple(tuple).build();
    }

    /** As {@link #explain(Tuple)}, from a parsed packet (for verdict logs of the agent). */
    public Explanation explain(PacketTuple original) {
        PacketTuple packet = new PacketTuple().set(original.source(), original.destination(), original.protocol, original.dstPort);
        if (packet.family == IpAddress.V4) {
            packet.setV4((int) packet.srcLo, (int) packet.dstLo, packet.protocol, packet.dstPort);
        } else if (packet.family != IpAddress.V6) {
            throw new IllegalArgumentException("unknown address family " + packet.family);
        }
        AddressTable table = packet.family == IpAddress.V4 ? v4 : v6;
        long srcEntry = table.lookup(packet.srcHi, packet.srcLo, 0);
        long dstEntry = table.lookup(packet.dstHi, packet.dstLo, 0);
        int src = endpointOf(srcEntry);
        int dst = endpointOf(dstEntry);
        Explanation.Builder b = Explanation.newBuilder().setTuple(packet.toTuple());
        DirectionExplanation egress = notEvaluated();
        DirectionExplanation ingress = notEvaluated();
        if (src >= 0) {
            b.setSource(endpointIds[src]);
            egress = direction(evaluate(src, Decision.EGRESS, packet, packet.dstHi, packet.dstLo, membershipOf(dstEntry), false));
        }
        if (dst >= 0) {
            b.setDestination(endpointIds[dst]);
            ingress = direction(evaluate(dst, Decision.INGRESS, packet, packet.srcHi, packet.srcLo, membershipOf(srcEntry), false));
        }
        return b.setEgress(egress).setIngress(ingress).setVerdict(Explanations.combine(egress, ingress)).build();
    }

    private static DirectionExplanation notEvaluated() {
        return DirectionExplanation.newBuilder().setEvaluated(false).setReason("not a local endpoint").build();
    }

    /** One direction's code in words. */
    public DirectionExplanation direction(int code) {
        DirectionExplanation.Builder d = DirectionExplanation.newBuilder()
                .setEvaluated(Decision.index(code) != Decision.NO_ENDPOINT)
                // Isolated: some tier lists a policy, even if every tier then passed.
                .setIsolated(Decision.index(code) != Decision.NOT_ISOLATED && Decision.index(code) != Decision.NO_ENDPOINT)
                .setVerdict(Decision.allowed(code) ? io.kubeverdict.proto.v1.Verdict.VERDICT_ALLOW
                        : io.kubeverdict.proto.v1.Verdict.VERDICT_DENY)
                .setReason(reason(code));
        PolicyId p = decidingPolicy(code);
        if (p != null) {
            d.setPolicy(p).setRuleId(decidingRuleId(code));
        }
        String tier = p != null ? p.getTier() : tierOf(code);
        if (tier != null) {
            d.setDecidingTier(tier);
        }
        return d.build();
    }
}
