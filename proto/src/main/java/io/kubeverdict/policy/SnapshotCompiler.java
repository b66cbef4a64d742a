package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns a NodeSnapshot into the flat arrays of a {@link SnapshotIndex} (and the names of
 * {@link IndexNames}). Anything unusable (bad
 * address, unknown set, wrong set type, unspecified action) is skipped and counted as a problem
 * and always in the direction of matching less: a broken reference never widens what is allowed.
 */
final class SnapshotCompiler {

    static final int ACTION_ALLOW = 1;
    static final int ACTION_DENY = 2;
    static final int ACTION_PASS = 3;
    /** A port clause that can never match (missing named-port set, invalid protocol or range). */
    static final int NEVER = -2;
    static final int NOT_NAMED = -1;
    static final int MAX_PROBLEM_MESSAGES = 100;

    record Key(long hi, long lo, int ext) {}

    private record IntArrayKey(int[] values) {
        @Override
        public boolean equals(Object o) {
            return o instanceof IntArrayKey k && Arrays.equals(values, k.values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }
    }

    final List<String> problems = new ArrayList<>();
    int problemCount;

    // Sets
    final Map<String, Integer> setIndex = new HashMap<>();
    final List<IpSetType> setTypes = new ArrayList<>();
    private final KeyedMembers v4 = new KeyedMembers();
    private final KeyedMembers v6 = new KeyedMembers();
    private final KeyedMembers v4Named = new KeyedMembers();
    private final KeyedMembers v6Named = new KeyedMembers();

    // Domain-name sets (learned per endpoint at run time): id -> index, and their patterns
    final Map<String, Integer> domainSetIndex = new HashMap<>();
    final List<String> domainSetIds = new ArrayList<>();
    final List<List<String>> domainPatterns = new ArrayList<>();

    // Membership pool: at an offset, a count followed by that many sorted set indices.
    private final IntList mem = new IntList();
    private final Map<IntArrayKey, Integer> memOffsets = new HashMap<>();

    // Endpoints and tiers
    final List<EndpointId> endpointIds = new ArrayList<>();
    int[] epTierStart;
    int[] epTierEnd;
    /** Per endpoint: the domain sets whose answers it watches (indices, in the endpoint's order). */
    final List<int[]> epWatches = new ArrayList<>();
    final IntList tierDefault = new IntList();
    final IntList tierName = new IntList();
    final IntList tierPolStart = new IntList();
    final IntList tierPolEnd = new IntList();
    final IntList tierPolicies = new IntList();
    final Map<String, Integer> tierNameIndex = new LinkedHashMap<>();

    // Policies and rules
    final Map<PolicyId, Integer> policyIndex = new HashMap<>();
    final List<PolicyId> policyIds = new ArrayList<>();
    final IntList polRuleStart = new IntList();
    final IntList polRuleEnd = new IntList();
    final IntList ruleAction = new IntList();
    final IntList ruleAllPeers = new IntList();
    final IntList rulePolicy = new IntList();
    final List<String> ruleIds = new ArrayList<>();
    final IntList ruleSetStart = new IntList();
    final IntList ruleSetEnd = new IntList();
    final IntList ruleSets = new IntList();
    final IntList ruleDomainStart = new IntList();
    final IntList ruleDomainEnd = new IntList();
    final IntList ruleDomains = new IntList();
    final List<RangeSet> ruleV4 = new ArrayList<>();
    final List<RangeSet> ruleV6 = new ArrayList<>();
    final IntList rulePortStart = new IntList();
    final IntList rulePortEnd = new IntList();
    final IntList portProto = new IntList();
    final IntList portLo = new IntList();
    final IntList portHi = new IntList();
    final IntList portNamedSet = new IntList();

    AddressTable v4Table;
    AddressTable v6Table;
    AddressTable v4NamedTable;
    AddressTable v6NamedTable;
    int[] memPool;

    SnapshotCompiler compile(NodeSnapshot snapshot) {
        mem.add(0); // offset 0: the empty membership list
        for (IpSet set : snapshot.getIpSetsList()) {
            addSet(set);
        }
        for (ActivePolicy policy : snapshot.getPoliciesList()) {
            addPolicy(policy);
        }
        epTierStart = new int[snapshot.getEndpointsCount() * 2];
        epTierEnd = new int[snapshot.getEndpointsCount() * 2];
        for (Endpoint endpoint : snapshot.getEndpointsList()) {
            addEndpoint(endpoint);
        }
        v4Table = addressTable(v4, true, true);
        v6Table = addressTable(v6, true, false);
        v4NamedTable = addressTable(v4Named, false, true);
        v6NamedTable = addressTable(v6Named, false, false);
        memPool = mem.toArray();
        return this;
    }

    void problem(String message) {
        problemCount++;
        if (problems.size() < MAX_PROBLEM_MESSAGES) {
            problems.add(message);
        }
    }

    // ---- IP sets

    private void addSet(IpSet set) {
        if (setIndex.containsKey(set.getId())) {
            problem("ip set " + set.getId() + " appears twice; the first is used");
            return;
        }
        IpSetType type = set.getType();
        if (type != IpSetType.IP && type != IpSetType.IP_AND_PORT) {
            problem("ip set " + set.getId() + " has unknown type " + type + "; it matches nothing");
            return;
        }
        int index = setTypes.size();
        setIndex.put(set.getId(), index);
        setTypes.add(type);
        for (String member : set.getMembersList()) {
            if (type == IpSetType.IP) {
                IpAddress a = IpAddress.tryParse(member);
                if (a == null) {
                    problem("ip set " + set.getId() + ": invalid member \"" + member + "\" skipped");
                    continue;
                }
                (a.family() == IpAddress.V4 ? v4 : v6).addSet(a.hi(), a.lo(), 0, index);
            } else {
                Key key = namedMemberKey(member);
                if (key == null) {
                    problem("ip set " + set.getId() + ": invalid member \"" + member + "\" skipped");
                    continue;
                }
                (isV4Named(member) ? v4Named : v6Named).addSet(key.hi(), key.lo(), key.ext(), index);
            }
        }
    }

    /** An IPv4 member has no colon before its comma (IPv6 addresses always have one). */
    private static boolean isV4Named(String member) {
        int comma = member.indexOf(',');
        return member.lastIndexOf(':', comma) < 0;
    }

    /** "address,protocol:port" -> key (hi, lo, protocol << 16 | port), or null. */
    static Key namedMemberKey(String member) {
        int comma = member.indexOf(',');
        if (comma < 0) {
            return null;
        }
        IpAddress a = IpAddress.tryParse(member.substring(0, comma));
        String rest = member.substring(comma + 1);
        int colon = rest.indexOf(':');
        if (a == null || colon < 0) {
            return null;
        }
        int protocol = switch (rest.substring(0, colon).toLowerCase(Locale.ROOT)) {
            case "tcp" -> Protocol.TCP_VALUE;
            case "udp" -> Protocol.UDP_VALUE;
            case "sctp" -> Protocol.SCTP_VALUE;
            default -> -1;
        };
        String p = rest.substring(colon + 1);
        if (protocol < 0 || p.isEmpty() || p.length() > 5 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return null;
        }
        int port = Integer.parseInt(p);
        if (port < 1 || port > 65535) {
            return null;
        }
        return new Key(a.hi(), a.lo(), protocol << 16 | port);
    }


    /** Interns a sorted, de-duplicated membership list in the pool; returns its offset. */
    private int membership(int[] sets, int from, int to) {
        if (from == to) {
            return 0;
        }
        int[] sorted = Arrays.copyOfRange(sets, from, to);
        Arrays.sort(sorted);
        int n = 1;
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] != sorted[n - 1]) {
                sorted[n++] = sorted[i];
            }
        }
        int[] list = Arrays.copyOf(sorted, n);
        return memOffsets.computeIfAbsent(new IntArrayKey(list), k -> {
            int offset = mem.size();
            mem.add(list.length);
            for (int s : list) {
                mem.add(s);
            }
            return offset;
        });
    }

    private AddressTable addressTable(KeyedMembers keys, boolean withEndpoint, boolean narrow) {
        AddressTable table = new AddressTable(keys.size(), narrow);
        int[][] grouped = keys.groupedSets();
        int[] start = grouped[0];
        int[] sets = grouped[1];
        for (int i = 0; i < keys.size(); i++) {
            long offset = membership(sets, start[i], start[i + 1]);
            long value = withEndpoint ? ((long) (keys.endpoint(i) + 1) << 32) | offset : offset;
            table.put(keys.hi(i), keys.lo(i), keys.ext(i), value);
        }
        return table;
    }

    // ---- policies and rules

    private void addPolicy(ActivePolicy policy) {
        PolicyId id = policy.getId();
        if (policyIndex.containsKey(id)) {
            problem("policy " + id.getTier() + "/" + id.getName() + " appears twice; the first is used");
            return;
        }
        int index = policyIds.size();
        policyIndex.put(id, index);
        policyIds.add(id);
        // Two slots per policy: [EGRESS] outbound rules, [INGRESS] inbound rules.
        int egressStart = ruleAction.size();
        for (Rule rule : policy.getPolicy().getOutboundRulesList()) {
            addRule(index, rule, true);
        }
        int ingressStart = ruleAction.size();
        for (Rule rule : policy.getPolicy().getInboundRulesList()) {
            addRule(index, rule, false);
        }
        polRuleStart.add(egressStart);
        polRuleEnd.add(ingressStart);
        polRuleStart.add(ingressStart);
        polRuleEnd.add(ruleAction.size());
    }

    /** The index of a domain set (the first pattern list given for an id is kept); -1 when unusable. */
    private int domainSet(String where, DomainNames names) {
        String id = names.getLearnedSetId();
        if (id.isEmpty() || names.getPatternsCount() == 0) {
            problem(where + ": domain-name peer without " + (id.isEmpty() ? "learned set id" : "patterns")
                    + "; it matches nothing");
            return -1;
        }
        Integer known = domainSetIndex.get(id);
        if (known != null) {
            if (!domainPatterns.get(known).equals(names.getPatternsList())) {
                problem(where + ": domain set " + id + " appears with other patterns; the first are used");
            }
            return known;
        }
        int index = domainSetIds.size();
        domainSetIndex.put(id, index);
        domainSetIds.add(id);
        domainPatterns.add(List.copyOf(names.getPatternsList()));
        return index;
    }

    private void addRule(int policy, Rule rule, boolean outbound) {
        String where = "policy " + policyIds.get(policy).getTier() + "/" + policyIds.get(policy).getName()
                + " rule " + rule.getRuleId();
        int action = switch (rule.getAction()) {
            case ALLOW -> ACTION_ALLOW;
            case DENY -> ACTION_DENY;
            case PASS -> ACTION_PASS;
            default -> {
                problem(where + ": action " + rule.getAction() + " treated as DENY");
                yield ACTION_DENY;
            }
        };
        ruleAction.add(action);
        rulePolicy.add(policy);
        ruleIds.add(rule.getRuleId());
        // Per the contract all_peers counts only when no peer is given: a peer list is never widened.
        ruleAllPeers.add(rule.getAllPeers() && rule.getPeersCount() == 0 ? 1 : 0);
        ruleSetStart.add(ruleSets.size());
        ruleDomainStart.add(ruleDomains.size());
        RangeSet.Builder b4 = new RangeSet.Builder();
        RangeSet.Builder b6 = new RangeSet.Builder();
        for (Peer peer : rule.getPeersList()) {
            switch (peer.getKindCase()) {
                case IP_SET_ID -> {
                    Integer set = setIndex.get(peer.getIpSetId());
                    if (set == null || setTypes.get(set) != IpSetType.IP) {
                        problem(where + ": peer ip set " + peer.getIpSetId()
                                + (set == null ? " is missing" : " is not of type IP") + "; it matches nothing");
                    } else {
                        ruleSets.add(set);
                    }
                }
                case IP_BLOCK -> addBlock(where, peer.getIpBlock(), b4, b6);
                case DOMAIN_NAMES -> {
                    int d = domainSet(where, peer.getDomainNames());
                    if (!outbound) {
                        problem(where + ": a domain-name peer in an inbound rule matches nothing");
                    } else if (d >= 0) {
                        ruleDomains.add(d);
                    }
                }
                default -> problem(where + ": empty peer matches nothing");
            }
        }
        ruleSetEnd.add(ruleSets.size());
        ruleDomainEnd.add(ruleDomains.size());
        ruleV4.add(b4.isEmpty() ? null : b4.build());
        ruleV6.add(b6.isEmpty() ? null : b6.build());
        rulePortStart.add(portProto.size());
        for (PortMatch port : rule.getPortsList()) {
            addPort(where, port);
        }
        rulePortEnd.add(portProto.size());
    }

    private void addBlock(String where, IpBlock block, RangeSet.Builder b4, RangeSet.Builder b6) {
        Cidr cidr = Cidr.tryParse(block.getCidr());
        if (cidr == null) {
            problem(where + ": invalid cidr \"" + block.getCidr() + "\"; the block matches nothing");
            return;
        }
        List<Cidr> excepts = new ArrayList<>();
        for (String e : block.getExceptList()) {
            Cidr except = Cidr.tryParse(e);
            if (except == null) {
                // Without the except the block would allow more than written: drop the block.
                problem(where + ": invalid except \"" + e + "\"; the block matches nothing");
                return;
            }
            excepts.add(except);
        }
        (cidr.family() == IpAddress.V4 ? b4 : b6).add(cidr, excepts);
    }

    private void addPort(String where, PortMatch port) {
        if (!port.getNamedPortIpSetId().isEmpty()) {
            Integer set = setIndex.get(port.getNamedPortIpSetId());
            if (set == null || setTypes.get(set) != IpSetType.IP_AND_PORT) {
                problem(where + ": named-port ip set " + port.getNamedPortIpSetId()
                        + (set == null ? " is missing" : " is not of type IP_AND_PORT") + "; it matches nothing");
            }
            addPortClause(0, 0, 0, set == null || setTypes.get(set) != IpSetType.IP_AND_PORT ? NEVER : set);
            return;
        }
        int protocol = port.getProtocolValue();
        // uint32 on the wire: read unsigned, or a port of 2^31 and more would be a negative start.
        long lo = Integer.toUnsignedLong(port.getPort());
        long end = Integer.toUnsignedLong(port.getEndPort());
        long hi = lo == 0 ? 65535 : (end == 0 ? lo : end);
        boolean valid = (protocol == Protocol.TCP_VALUE || protocol == Protocol.UDP_VALUE
                || protocol == Protocol.SCTP_VALUE) && lo <= 65535 && lo <= hi;
        if (!valid) {
            problem(where + ": port clause " + port.getProtocol() + " " + lo + "-" + end + " is invalid; it matches nothing");
        }
        addPortClause(protocol, (int) Math.min(lo, 65535), (int) Math.min(hi, 65535), valid ? NOT_NAMED : NEVER);
    }

    private void addPortClause(int protocol, int lo, int hi, int namedSet) {
        portProto.add(protocol);
        portLo.add(lo);
        portHi.add(hi);
        portNamedSet.add(namedSet);
    }

    // ---- endpoints and tiers

    private void addEndpoint(Endpoint endpoint) {
        int index = endpointIds.size();
        endpointIds.add(endpoint.getId());
        String who = endpoint.getId().getNamespace() + "/" + endpoint.getId().getPod();
        for (String ip : endpoint.getEndpoint().getIpsList()) {
            IpAddress a = IpAddress.tryParse(ip);
            if (a == null) {
                problem("endpoint " + who + ": invalid address \"" + ip + "\" skipped");
                continue;
            }
            KeyedMembers keys = a.family() == IpAddress.V4 ? v4 : v6;
            int key = keys.indexOf(a.hi(), a.lo(), 0);
            if (keys.endpoint(key) >= 0) {
                EndpointId other = endpointIds.get(keys.endpoint(key));
                problem("endpoint " + who + ": address " + a + " already belongs to " + other.getNamespace()
                        + "/" + other.getPod() + "; the first is used");
                continue;
            }
            keys.setEndpoint(key, index);
        }
        IntList watches = new IntList();
        for (DomainNames watch : endpoint.getEndpoint().getDomainWatchesList()) {
            int d = domainSet("endpoint " + who, watch);
            if (d >= 0 && !watches.contains(d)) {
                watches.add(d);
            }
        }
        epWatches.add(watches.toArray());
        for (int direction : new int[] {Decision.EGRESS, Decision.INGRESS}) {
            epTierStart[index * 2 + direction] = tierDefault.size();
            for (TierInfo tier : endpoint.getEndpoint().getTiersList()) {
                List<String> names = direction == Decision.EGRESS ? tier.getEgressPoliciesList() : tier.getIngressPoliciesList();
                if (names.isEmpty()) {
                    continue; // a tier with no policies for the direction is skipped
                }
                int def = switch (tier.getDefaultAction()) {
                    case ALLOW -> ACTION_ALLOW;
                    case DENY -> ACTION_DENY;
                    case PASS -> ACTION_PASS;
                    default -> {
                        problem("endpoint " + who + " tier " + tier.getName() + ": default action "
                                + tier.getDefaultAction() + " treated as DENY");
                        yield ACTION_DENY;
                    }
                };
                tierDefault.add(def);
                tierName.add(tierNameIndex.computeIfAbsent(tier.getName(), n -> tierNameIndex.size()));
                tierPolStart.add(tierPolicies.size());
                for (String name : names) {
                    Integer policy = policyIndex.get(PolicyId.newBuilder().setTier(tier.getName()).setName(name).build());
                    if (policy == null) {
                        problem("endpoint " + who + " tier " + tier.getName() + ": policy " + name
                                + " is missing; its rules match nothing");
                    }
                    tierPolicies.add(policy == null ? -1 : policy);
                }
                tierPolEnd.add(tierPolicies.size());
            }
            epTierEnd[index * 2 + direction] = tierDefault.size();
        }
    }
}
