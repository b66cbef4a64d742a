// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.NodeSnapshot;
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
 * {@link Program} ({@link ProgramMatch}) or, beyond 64 rules, by walking the rules
 * ({@link RuleWalk}). The index is made of {@link IndexParts}.
 */
public final class SnapshotIndex {

    private final String node;
    // address -> AddressEntry: endpoint, ipBlock segment, membership
    private final AddressTable v4;
    private final AddressTable v6;
    // [endpoint * 2 + direction] -> range of tiers that list policies for that direction
    final int[] epTierStart;
    final int[] epTierEnd;
    final int[] epStagedStart; // would-be tier ranges (live ones where nothing is staged): StagedDecision
    final int[] epStagedEnd;
    final boolean[] slotStaged;
    private final boolean anyStaged;
    final int[] tierDefault;
    final int[] tierName;
    final int[] ruleAction;

    // What the rule matchers read ({@link ProgramMatch}, {@link RuleWalk}: static, each reading
    // this index as its own methods would, so the hot path has no object in between): package-private.
    // (address, protocol << 16 | port) -> membership offset
    private final AddressTable v4Named;
    private final AddressTable v6Named;
    final NamedPorts namedPorts;
    final int[] mem;
    final PortClasses portClasses;
    // tier -> range of its policies (policy -1: missing)
    final int[] tierPolStart;
    final int[] tierPolEnd;
    final int[] tierPolicies;
    // [policy * 2 + direction] -> range of rules
    final int[] polRuleStart;
    final int[] polRuleEnd;
    // rule -> peers: all, IP-set numbers, domain-name sets, ipBlocks; ports: range of port clauses
    final boolean[] ruleAllPeers;
    final int[] ruleSetStart;
    final int[] ruleSetEnd;
    final int[] ruleSets;
    final int[] ruleDomainStart;
    final int[] ruleDomainEnd;
    final int[] ruleDomains;
    final RangeSet[] ruleV4;
    final RangeSet[] ruleV6;
    final int[] rulePortStart;
    final int[] rulePortEnd;
    // port clause -> protocol, range, or the named-port set (SnapshotCompiler.NOT_NAMED / NEVER)
    final int[] portProto;
    final int[] portLo;
    final int[] portHi;
    final int[] portNamedSet;

    // Domain-name sets: ids, patterns, and per endpoint the sets whose DNS answers it watches.
    private final String[] domainSetIds;
    private final List<List<String>> domainPatterns;
    private final int[][] epWatches;

    // [endpoint * 2 + direction] -> the bit-mask program, or null: not isolated or > 64 rules (walk).
    final Program[] programs;
    final Program[] stagedPrograms; // of the staged tier ranges (null: not staged, or a walk)
    final boolean[] stagedSameRules; // the slot's staged and live programs number the same rules alike
    private final int programCount;
    /** The longest tier list of any (endpoint, direction): the size of a trace. */
    private final int maxTiers;

    /** Number of distinct tier names: where the rule entries of the decision codes start. */
    final int tierNames;

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
        epStagedStart = e.epStagedStart;
        epStagedEnd = e.epStagedEnd;
        slotStaged = e.slotStaged;
        anyStaged = e.anyStaged;
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
        stagedPrograms = p.programs().stagedBySlot;
        stagedSameRules = p.programs().stagedSameRules;
        programCount = p.programs().distinct;
        int longest = 0;
        for (int slot = 0; slot < epTierStart.length; slot++) {
            longest = Math.max(longest, epTierEnd[slot] - epTierStart[slot]);
            longest = Math.max(longest, epStagedEnd[slot] - epStagedStart[slot]);
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

    /**
     * Whether a verdict for this packet may depend on addresses learned from DNS answers: its source
     * or destination is a local endpoint that watches domain sets (only they have domain-name peers).
     * Allocation-free; false at once for a snapshot that names no domain sets.
     */
    public boolean mayUseLearned(PacketTuple packet) {
        if (domainSetIds.length == 0) {
            return false;
        }
        int src = endpointAt(packet.family, packet.srcHi, packet.srcLo);
        int dst = endpointAt(packet.family, packet.dstHi, packet.dstLo);
        return (src >= 0 && epWatches[src].length > 0) || (dst >= 0 && epWatches[dst].length > 0);
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

    /** Whether any endpoint has staged tiers: only then can {@link #decideStaged} differ from decide. */
    public boolean hasStaged() {
        return anyStaged;
    }

    /** As decide, by the staged tiers; {@link Decision#NOT_STAGED} when no direction of the packet has any. */
    public int decideStaged(PacketTuple packet, LearnedAddresses learned) {
        return anyStaged ? Decision.staged(StagedDecision.decideBoth(this, packet, learned)) : Decision.NOT_STAGED;
    }

    /** decide and decideStaged in one pass (lookups and unstaged directions once): {@link Decision#enforced}, staged. */
    public long decideWithStaged(PacketTuple packet, LearnedAddresses learned) {
        return StagedDecision.decideBoth(this, packet, learned);
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
        int egress = srcEndpoint < 0
                ? Decision.NONE
                : evaluate(srcEndpoint, Decision.EGRESS, packet, dstHi, dstLo, dstEntry, learned, walkOnly, null);
        int ingress = dstEndpoint < 0 || !Decision.allowedOrNone(egress)
                ? Decision.NONE
                : evaluate(dstEndpoint, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned, walkOnly, null);
        return Decision.combine(egress, ingress, dstEndpoint >= 0);
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
        return walkTiers(
                epTierStart[slot],
                epTierEnd[slot],
                walkOnly ? null : programs[slot],
                endpoint,
                direction,
                packet,
                remoteHi,
                remoteLo,
                remoteEntry,
                learned,
                trace);
    }

    /** The tier walk over tiers [tierStart, tierEnd), by the program when there is one (else rule by rule). */
    int walkTiers(
            int tierStart,
            int tierEnd,
            Program program,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned,
            int[] trace) {
        long matched = program == null || tierStart == tierEnd
                ? 0
                : ProgramMatch.matchingRules(this, program, endpoint, packet, remoteHi, remoteLo, remoteEntry, learned);
        return TierWalk.walk(
                this,
                tierStart,
                tierEnd,
                program,
                matched,
                endpoint,
                direction,
                packet,
                remoteHi,
                remoteLo,
                remoteEntry,
                learned,
                trace);
    }

    // ---- named-port membership, for both matchers

    /** The membership of the destination's (address, protocol, port) in named-port sets (0: none). */
    int namedMembership(PacketTuple packet) {
        int ext = packet.protocol << 16 | packet.dstPort;
        long entry = packet.family == IpAddress.V4
                ? v4Named.get(packet.dstLo & 0xFFFF_FFFFL, ext)
                : v6Named.get(packet.dstHi, packet.dstLo, ext);
        return entry < 0 ? 0 : (int) entry;
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
