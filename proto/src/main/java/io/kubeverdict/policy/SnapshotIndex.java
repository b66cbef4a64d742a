// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import java.util.List;

/**
 * A node snapshot compiled for the hot path: endpoints by address, IP-set membership, rules in
 * evaluation order, and {@link #decide}. Immutable and thread-safe; a changed snapshot gives a new
 * index, by {@link #update} from this one (only what changed is redone, copy-on-write, see
 * {@link IndexUpdate}) or by {@link #compile}. The semantics are those documented in policy.proto.
 * Words for its codes come from {@link DecisionText}, whole explanations from {@link Explainer};
 * both read this index and never run on the hot path.
 *
 * <p>Layout: one open-addressing table per family maps an address to its local endpoint (if
 * any), to its IP-set membership (one or two sets inline, else a sorted list in the pool; see
 * {@link Membership}) and to the ipBlock segment it lies in ({@link BlockSegments}, so a program
 * reads which rules' blocks hold it instead of searching), one long per address
 * ({@link AddressEntry}); a packet costs two lookups whatever the number of sets; named-port
 * membership (address, protocol, port) has its own table, looked up only when a named-port
 * clause is reached. Rules are flattened into parallel arrays.
 *
 * <p>Evaluation of one direction of one endpoint is {@link #evaluate}: the tier walk of
 * policy.proto (tiers in order, the first matching rule or else the tier default decides, PASS
 * moves on) over the first matching rule per tier, found by the endpoint's bit-mask
 * {@link Program} or, beyond 64 rules, by walking the rules.
 */
public final class SnapshotIndex {

    private final String node;
    // address -> AddressEntry: endpoint, ipBlock segment, membership
    private final AddressTable v4;
    private final AddressTable v6;
    // (address, protocol << 16 | port) -> membership offset
    private final AddressTable v4Named;
    private final AddressTable v6Named;
    private final NamedPorts namedPorts;
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
    private final int[] ruleDomainStart;
    private final int[] ruleDomainEnd;
    private final int[] ruleDomains;
    private final String[] domainSetIds;
    private final List<List<String>> domainPatterns;
    private final int[][] epWatches;
    private final RangeSet[] ruleV4;
    private final RangeSet[] ruleV6;
    private final int[] rulePortStart;
    private final int[] rulePortEnd;
    private final int[] portProto;
    private final int[] portLo;
    private final int[] portHi;
    private final int[] portNamedSet;
    private final PortClasses portClasses;

    // [endpoint * 2 + direction] -> the bit-mask program, or null: not isolated or > 64 rules (walk).
    private final Program[] programs;
    private final int programCount;
    /** The longest tier list of any (endpoint, direction): the size of a trace. */
    private final int maxTiers;

    /** Number of distinct tier names: where the rule entries of the decision codes start. */
    private final int tierNames;

    private final IndexNames names;
    private final int problemCount;
    private final List<String> problems;

    /** The compile phases' results, kept so that {@link IndexUpdate} redoes only what a change touches. */
    final IndexParts parts;

    SnapshotIndex(String node, IndexParts p) {
        this.node = node;
        this.parts = p;
        CompiledRules c = p.rules();
        EndpointTiers e = p.endpoints();
        v4 = p.v4();
        v6 = p.v6();
        v4Named = p.v4Named();
        v6Named = p.v6Named();
        namedPorts = p.namedPorts();
        mem = p.pool().array();
        epTierStart = e.epTierStart;
        epTierEnd = e.epTierEnd;
        tierDefault = e.tierDefault;
        tierName = e.tierName;
        tierPolStart = e.tierPolStart;
        tierPolEnd = e.tierPolEnd;
        tierPolicies = e.tierPolicies;
        polRuleStart = c.polRuleStart;
        polRuleEnd = c.polRuleEnd;
        ruleAction = c.ruleAction;
        ruleAllPeers = c.ruleAllPeers;
        ruleSetStart = c.ruleSetStart;
        ruleSetEnd = c.ruleSetEnd;
        ruleSets = c.ruleSets;
        ruleDomainStart = c.ruleDomainStart;
        ruleDomainEnd = c.ruleDomainEnd;
        ruleDomains = c.ruleDomains;
        domainSetIds = e.domainSetIds;
        domainPatterns = e.domainPatterns;
        epWatches = e.epWatches;
        ruleV4 = c.ruleV4;
        ruleV6 = c.ruleV6;
        rulePortStart = c.rulePortStart;
        rulePortEnd = c.rulePortEnd;
        portProto = c.portProto;
        portLo = c.portLo;
        portHi = c.portHi;
        portNamedSet = c.portNamedSet;
        portClasses = c.portClasses;
        programs = p.programs().bySlot;
        programCount = p.programs().distinct;
        int longest = 0;
        for (int slot = 0; slot < epTierStart.length; slot++) {
            longest = Math.max(longest, epTierEnd[slot] - epTierStart[slot]);
        }
        maxTiers = longest;
        names = new IndexNames(e.endpointIds, e.tierNames, c.policyIds, c.rulePolicy, c.ruleIds);
        tierNames = names.tierCount();
        ProblemList all = ProblemList.concat(p.setProblems(), c.problems, e.problems);
        problemCount = all.count();
        problems = all.messages();
    }

    public static SnapshotIndex compile(NodeSnapshot snapshot) {
        return new SnapshotIndex(
                snapshot.getNode(), new SnapshotCompiler().compile(snapshot).parts());
    }

    /**
     * The index of {@code now}, made from this index of {@code before} by redoing only what differs
     * (see {@link IndexUpdate}); decides exactly as {@code compile(now)} would. This index is not
     * changed and stays usable. {@code before} must be the snapshot this index was made from.
     * Updates of indexes made from one compile must not run concurrently (they append to one
     * membership pool); decide() may run concurrently with anything.
     */
    public IndexUpdate.Result update(NodeSnapshot before, NodeSnapshot now) {
        return IndexUpdate.apply(this, before, now);
    }

    public String node() {
        return node;
    }

    public int endpointCount() {
        return names.endpointCount();
    }

    /** How many unusable items (bad addresses, missing sets/policies, ...) compile skipped. */
    public int problemCount() {
        return problemCount;
    }

    /** The first problems, in words (at most 100). */
    public List<String> problems() {
        return problems;
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

    /** The local endpoint with this number (numbers as in {@link LearnedAddresses}). */
    public io.kubeverdict.proto.v1.EndpointId endpointId(int endpoint) {
        return names.endpoint(endpoint);
    }

    /** How many distinct domain-name sets (learned_set_id) the snapshot names. */
    public int domainSetCount() {
        return domainSetIds.length;
    }

    public String domainSetId(int domainSet) {
        return domainSetIds[domainSet];
    }

    /** The canonical patterns of a domain set (lower case, no trailing dot, optional "*." prefix). */
    public List<String> domainPatterns(int domainSet) {
        return domainPatterns.get(domainSet);
    }

    /** The domain sets whose DNS answers this endpoint watches (empty: it has no domain-name rules). */
    public int[] domainWatches(int endpoint) {
        return epWatches[endpoint].clone();
    }

    /** The domain sets of a rule's domain-name peers (numbers as in {@link #domainSetId}); empty for most rules. */
    int[] ruleDomainSets(int rule) {
        return java.util.Arrays.copyOfRange(ruleDomains, ruleDomainStart[rule], ruleDomainEnd[rule]);
    }

    /** The local endpoint holding this address, or -1 (family and address as in {@link LearnedAddresses}). */
    public int endpointAt(int family, long hi, long lo) {
        return AddressEntry.endpoint(entry(family, hi, lo));
    }

    /** What the numbers in this index's codes stand for (for {@link DecisionText}, {@link Explainer}). */
    IndexNames names() {
        return names;
    }

    // ------------------------------------------------------------------ hot path

    /**
     * The hot path: decides a packet without allocating. Returns a {@link Decision} code: whether
     * it is allowed, and an index of what decided, which {@link DecisionText} turns into words.
     * Egress of a local source is evaluated first (a deny there decides); then ingress of a local
     * destination. For a packet both directions allow, the code names the ingress decision unless
     * the destination is not isolated (or not local) and the source's egress was decided by a rule.
     */
    public int decide(PacketTuple packet) {
        return decide(packet, LearnedAddresses.NONE, false);
    }

    /** As {@link #decide(PacketTuple)}, domain-name peers asking {@code learned}. */
    public int decide(PacketTuple packet, LearnedAddresses learned) {
        return decide(packet, learned, false);
    }

    /** decide() by the rule-by-rule walk only: the yardstick the bit-mask programs are tested against. */
    int decideByWalking(PacketTuple packet) {
        return decide(packet, LearnedAddresses.NONE, true);
    }

    int decideByWalking(PacketTuple packet, LearnedAddresses learned) {
        return decide(packet, learned, true);
    }

    private int decide(PacketTuple packet, LearnedAddresses learned, boolean walkOnly) {
        int family = packet.family;
        if (family == IpAddress.V4) {
            return decide(
                    packet,
                    v4.get(packet.srcLo & 0xFFFF_FFFFL, 0),
                    v4.get(packet.dstLo & 0xFFFF_FFFFL, 0),
                    learned,
                    walkOnly);
        } else if (family == IpAddress.V6) {
            return decide(
                    packet,
                    v6.get(packet.srcHi, packet.srcLo, 0),
                    v6.get(packet.dstHi, packet.dstLo, 0),
                    learned,
                    walkOnly);
        }
        return Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true);
    }

    /** decide() once both addresses are looked up. */
    private int decide(PacketTuple packet, long srcEntry, long dstEntry, LearnedAddresses learned, boolean walkOnly) {
        int srcEndpoint = AddressEntry.endpoint(srcEntry);
        int dstEndpoint = AddressEntry.endpoint(dstEntry);
        if (srcEndpoint < 0 && dstEndpoint < 0) {
            return Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true);
        }
        boolean v4Packet = packet.family == IpAddress.V4;
        long srcHi = v4Packet ? 0 : packet.srcHi;
        long srcLo = v4Packet ? packet.srcLo & 0xFFFF_FFFFL : packet.srcLo;
        long dstHi = v4Packet ? 0 : packet.dstHi;
        long dstLo = v4Packet ? packet.dstLo & 0xFFFF_FFFFL : packet.dstLo;
        int egress = -1;
        if (srcEndpoint >= 0) {
            egress = evaluate(srcEndpoint, Decision.EGRESS, packet, dstHi, dstLo, dstEntry, learned, walkOnly, null);
            if (!Decision.allowed(egress)) {
                return egress;
            }
        }
        if (dstEndpoint < 0) {
            return egress;
        }
        int ingress = evaluate(dstEndpoint, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned, walkOnly, null);
        if (!Decision.allowed(ingress)) {
            return ingress;
        }
        if (egress >= 0 && Decision.index(ingress) == Decision.NOT_ISOLATED && !Decision.isFixedReason(egress)) {
            return egress;
        }
        return ingress;
    }

    /**
     * One direction of one local endpoint, remote being the other side's address (and its address
     * table entry, or absent): the tier walk.
     * Each tier listing policies for the direction is tried in order; its first matching rule, or
     * else its default, decides, unless that action is PASS, which moves on to the next tier.
     * With a trace (explanations only; null on the hot path) each tier's outcome is appended:
     * trace[0] counts the steps, each step is {@code decisionIndex << 2 | action}.
     * Package-private for {@link Explainer}, which walks one direction alone with a trace.
     */
    int evaluate(
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned,
            boolean walkOnly,
            int[] trace) {
        int slot = endpoint * 2 + direction;
        int tierStart = epTierStart[slot];
        int tierEnd = epTierEnd[slot];
        if (tierStart == tierEnd) {
            return Decision.of(Decision.NOT_ISOLATED, direction, true);
        }
        Program program = walkOnly ? null : programs[slot];
        int remoteMem = AddressEntry.membership(remoteEntry);
        long matched = program == null
                ? 0
                : matchingRules(program, endpoint, packet, remoteHi, remoteLo, remoteEntry, learned);
        for (int t = tierStart; t < tierEnd; t++) {
            int rule = program != null
                    ? program.firstRule(t - tierStart, matched)
                    : firstMatchingRule(t, endpoint, direction, packet, remoteHi, remoteLo, remoteMem, learned);
            int action = rule >= 0 ? ruleAction[rule] : tierDefault[t];
            if (trace != null) {
                int index = rule >= 0 ? Decision.ruleIndex(rule, tierNames) : Decision.tierDefaultIndex(tierName[t]);
                trace[++trace[0]] = index << 2 | action;
            }
            if (action == SnapshotCompiler.ACTION_PASS) {
                continue;
            }
            int index = rule >= 0 ? Decision.ruleIndex(rule, tierNames) : Decision.tierDefaultIndex(tierName[t]);
            return Decision.of(index, direction, action == SnapshotCompiler.ACTION_ALLOW);
        }
        return Decision.of(Decision.PASSED_ALL_TIERS, direction, true);
    }

    // ---- rule matching by the bit-mask program

    /** The program's rules whose peers and ports both match (see {@link Program}). */
    private long matchingRules(
            Program p,
            int endpoint,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned) {
        long peers = peerMask(p, packet.family, remoteHi, remoteLo, remoteEntry);
        int[] domains = p.domainSets;
        for (int q = 0; q < domains.length; q++) {
            long m = p.domainMasks[q];
            if ((peers & m) != m && learned.contains(endpoint, domains[q], packet.family, remoteHi, remoteLo)) {
                peers |= m;
            }
        }
        return peers == 0 ? 0 : peers & portMask(p, packet, peers);
    }

    /** Rules whose peers hold the remote address: all-peers rules, IP-set peers, ipBlocks. */
    private long peerMask(Program p, int family, long remoteHi, long remoteLo, long remoteEntry) {
        long peers = p.allPeersMask | p.peerSets.of(mem, AddressEntry.membership(remoteEntry));
        return peers | p.blocksHolding(family, remoteHi, remoteLo, remoteEntry);
    }

    /**
     * Rules (among those in peers) whose ports match: no ports, a numbered clause, a named port.
     * Named ports cost one probe of the named-port table, skipped when no named-port member has the
     * packet's protocol and port ({@link NamedPorts}) or when every named-port rule still
     * wanted sits behind one that already matched in its tier (it cannot be the tier's first match,
     * so the result's lowest bit per tier, all that {@link Program#firstRule} reads, is the same).
     */
    private long portMask(Program p, PacketTuple packet, long peers) {
        long ports = p.noPortsMask;
        long wanted = peers & ~ports;
        if (wanted == 0) {
            return ports;
        }
        long[] byClass = p.portsByClass;
        if (byClass != null) {
            int portClass = portClasses.classOf(packet.protocol, packet.dstPort);
            if (portClass == PortClasses.NO_PORTS) {
                return ports; // only rules without ports match other protocols
            }
            ports |= byClass[portClass];
        } else {
            MaskMap byPort = p.ports(packet.protocol);
            if (byPort == null) {
                return ports;
            }
            ports |= byPort.get(0, packet.dstPort);
        }
        wanted &= ~ports & ~p.shadowedBy(peers & ports);
        if ((wanted & p.namedPortRules) != 0 && namedPorts.mayHave(packet.protocol, packet.dstPort)) {
            // Every named-port rule of the destination's (address, protocol, port) sets, including
            // some not wanted: those are either not peers or behind a tier's first match.
            ports |= p.namedPortSets.of(mem, namedMembership(packet));
        }
        return ports;
    }

    // ---- rule matching by walking: endpoints with more than 64 rules, and the tests' yardstick

    /** The first rule of tier t (in policy order) whose peers and ports match, or -1. */
    private int firstMatchingRule(
            int t,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            int remoteMem,
            LearnedAddresses learned) {
        int protocol = packet.protocol;
        boolean hasPorts =
                protocol == Protocol.TCP_VALUE || protocol == Protocol.UDP_VALUE || protocol == Protocol.SCTP_VALUE;
        int namedMem = Membership.UNKNOWN; // looked up on the first named-port clause only
        for (int k = tierPolStart[t], kEnd = tierPolEnd[t]; k < kEnd; k++) {
            int policy = tierPolicies[k];
            if (policy < 0) {
                continue;
            }
            int pslot = policy * 2 + direction;
            for (int r = polRuleStart[pslot], rEnd = polRuleEnd[pslot]; r < rEnd; r++) {
                if (!peerMatches(r, packet.family, remoteHi, remoteLo, remoteMem)
                        && !learnedPeerMatches(r, endpoint, packet.family, remoteHi, remoteLo, learned)) {
                    continue;
                }
                int ps = rulePortStart[r];
                int pe = rulePortEnd[r];
                if (ps == pe) {
                    return r;
                }
                if (!hasPorts) {
                    continue;
                }
                for (int q = ps; q < pe; q++) {
                    int named = portNamedSet[q];
                    if (named == SnapshotCompiler.NOT_NAMED) {
                        if (portProto[q] == protocol && packet.dstPort >= portLo[q] && packet.dstPort <= portHi[q]) {
                            return r;
                        }
                    } else if (named >= 0) {
                        if (namedMem == Membership.UNKNOWN) {
                            namedMem = namedMembership(packet);
                        }
                        if (isMember(namedMem, named)) {
                            return r;
                        }
                    }
                }
            }
        }
        return -1;
    }

    private boolean peerMatches(int r, int family, long hi, long lo, int remoteMem) {
        if (ruleAllPeers[r]) {
            return true;
        }
        int ss = ruleSetStart[r];
        int se = ruleSetEnd[r];
        if (ss != se && remoteMem != Membership.EMPTY) {
            for (int i = ss; i < se; i++) {
                if (isMember(remoteMem, ruleSets[i])) {
                    return true;
                }
            }
        }
        RangeSet ranges = family == IpAddress.V4 ? ruleV4[r] : ruleV6[r];
        return ranges != null && ranges.contains(hi, lo);
    }

    /** Whether one of the rule's domain-name peers holds the remote in the endpoint's learned set. */
    private boolean learnedPeerMatches(int r, int endpoint, int family, long hi, long lo, LearnedAddresses learned) {
        for (int i = ruleDomainStart[r], end = ruleDomainEnd[r]; i < end; i++) {
            if (learned.contains(endpoint, ruleDomains[i], family, hi, lo)) {
                return true;
            }
        }
        return false;
    }

    // ---- membership

    private int namedMembership(PacketTuple packet) {
        int ext = packet.protocol << 16 | packet.dstPort;
        long entry = packet.family == IpAddress.V4
                ? v4Named.get(packet.dstLo & 0xFFFF_FFFFL, ext)
                : v6Named.get(packet.dstHi, packet.dstLo, ext);
        return entry < 0 ? 0 : (int) entry;
    }

    /** Whether the membership (see {@link Membership}) holds the set. */
    private boolean isMember(int membership, int set) {
        return Membership.contains(mem, membership, set);
    }

    // ------------------------------------------------------------------ outside the hot path

    /** The address entry, or absent; IPv4 in the low 32 bits. */
    long entry(int family, long hi, long lo) {
        if (family == IpAddress.V4) {
            return v4.get(lo & 0xFFFF_FFFFL, 0);
        }
        return family == IpAddress.V6 ? v6.get(hi, lo, 0) : AddressTable.ABSENT;
    }

    /** An empty trace big enough for any tier walk of this index (see {@link #evaluate}). */
    int[] newTrace() {
        return new int[1 + maxTiers];
    }
}
